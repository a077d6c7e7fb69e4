"""events keep no tsvector, and NULL dedupe keys are not indexed

Measured in ``benchmarks/RESULTS.md`` ("issue 15 events and ingest"):

- ``events.fts`` (stored ``to_tsvector`` of every event ever recorded, a third of an event row)
  goes. Its only reader was the compile's text match of an anima's few pending events; the
  compile now asks Postgres for an event's lexemes once and ranks in Python with the same
  ``ts_rank`` (``elephantasm/services/packs/event_match.py``). It was about half of Postgres's
  CPU per inserted event.
- ``uq_events_anima_dedupe`` becomes a partial unique index ``WHERE dedupe_key IS NOT NULL``: NULL
  keys never conflict, yet every event without a key had an entry. Inserts name the predicate in
  ``ON CONFLICT (anima_id, dedupe_key) WHERE dedupe_key IS NOT NULL``.

Downgrade recomputes the stored column for every event and restores the constraint.

Revision ID: 0012
Revises: 0011
"""

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: Union[str, None] = "0011"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

_TEXT = "to_tsvector('english', coalesce(summary, '') || ' ' || content)"
_KEYED = "dedupe_key IS NOT NULL"


def upgrade() -> None:
    op.drop_column("events", "fts")
    op.drop_constraint("uq_events_anima_dedupe", "events", type_="unique")
    op.create_index(
        "uq_events_anima_dedupe", "events", ["anima_id", "dedupe_key"], unique=True, postgresql_where=sa.text(_KEYED)
    )


def downgrade() -> None:
    op.drop_index("uq_events_anima_dedupe", table_name="events", postgresql_where=sa.text(_KEYED))
    op.create_unique_constraint("uq_events_anima_dedupe", "events", ["anima_id", "dedupe_key"])
    op.execute(f"ALTER TABLE events ADD COLUMN fts tsvector GENERATED ALWAYS AS ({_TEXT}) STORED")
