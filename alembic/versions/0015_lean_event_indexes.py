"""events: narrower time and session indexes, and no stored ``updated_at``

Measured in ``benchmarks/RESULTS.md`` ("issue 13 storage"):

- ``ix_events_anima_session`` becomes ``(anima_id, session_id)``. With ``occurred_at`` in the key
  every event had its own ~48-byte entry, and the per-anima appends left the pages about half
  full. Without it, the events of one session share one key and B-tree deduplication stores them
  as one posting list (6 bytes a heap pointer). Its readers only ever ask for one session (or
  the session-less events) of one anima; the ordered reads by time go through
  ``ix_events_org_anima_occurred`` or the pending seq range.
- ``ix_events_org_anima_occurred`` loses its last key column, ``id`` (16 of ~64 bytes an entry).
  The readers that order by ``(occurred_at, id)`` (the API listing, the head read's latest
  session) still read it in ``occurred_at`` order and sort only the ties on ``id`` (an incremental
  sort); ``org_id`` stays first: the org-wide listing and an org's cascade delete find its rows by it.
- ``updated_at`` is a virtual generated column equal to ``created_at`` (PostgreSQL 18): events
  are immutable (migration 0011), so the two were always the same 8 bytes twice. The wire keeps
  the field.

Downgrade restores both indexes as they were and the stored column (filled from ``created_at``).

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

SESSION_INDEX = "ix_events_anima_session"
TIME_INDEX = "ix_events_org_anima_occurred"


def upgrade() -> None:
    op.drop_index(SESSION_INDEX, table_name="events")
    op.create_index(SESSION_INDEX, "events", ["anima_id", "session_id"])
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
    op.drop_index(SESSION_INDEX, table_name="events")
    op.create_index(SESSION_INDEX, "events", ["anima_id", "session_id", "occurred_at"])
    op.drop_index(TIME_INDEX, table_name="events")
    op.create_index(TIME_INDEX, "events", ["org_id", "anima_id", "occurred_at", "id"])
