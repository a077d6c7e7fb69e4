"""events: a narrower time index, and no stored ``updated_at``

Measured in ``benchmarks/RESULTS.md`` ("issue 13 storage"):

- ``ix_events_org_anima_occurred`` loses its last key column, ``id`` (16 of ~64 bytes an entry).
  The readers that order by ``(occurred_at, id)`` (the API listing, the head read's latest
  session) still read it in ``occurred_at`` order and sort only the ties on ``id`` (an incremental
  sort); ``org_id`` stays first: the org-wide listing and an org's cascade delete find its rows by it.
- ``updated_at`` is a virtual generated column equal to ``created_at`` (PostgreSQL 18): events
  are immutable (migration 0011), so the two were always the same 8 bytes twice. The wire keeps
  the field.

``ix_events_anima_session`` keeps ``occurred_at`` (measured without it: 33 KB less per conversation, but
a page of a session's listing then sorts the whole session, 37–55 ms at 50,000 events in one session).

Downgrade restores the index as it was and the stored column (filled from ``created_at``).

Revision ID: 0015
Revises: 0014
"""

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: Union[str, None] = "0014"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

TIME_INDEX = "ix_events_org_anima_occurred"


def upgrade() -> None:
    op.drop_index(TIME_INDEX, table_name="events")
    op.create_index(TIME_INDEX, "events", ["org_id", "anima_id", "occurred_at"])
    op.drop_column("events", "updated_at")
    op.execute("ALTER TABLE events ADD COLUMN updated_at timestamptz GENERATED ALWAYS AS (created_at) VIRTUAL")


def downgrade() -> None:
    op.drop_column("events", "updated_at")
    op.add_column(
        "events", sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=True)
    )
    op.execute("UPDATE events SET updated_at = created_at")
    op.alter_column("events", "updated_at", nullable=False)
    op.drop_index(TIME_INDEX, table_name="events")
    op.create_index(TIME_INDEX, "events", ["org_id", "anima_id", "occurred_at", "id"])
