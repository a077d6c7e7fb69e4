"""lean event storage: no GIN index on events.fts, and the tsvector kept only while pending

Measured by ``python -m benchmarks storage`` (``benchmarks/RESULTS.md``): events were the largest
table as left after dreaming, mostly dead row versions and their index entries.

- ``ix_events_fts`` (GIN) is dropped. No query reads it: full-text matching of events happens only
  for an anima's pending (undistilled) events, which the planner reaches through
  ``ix_events_pending`` and then filters. The index covered every event ever recorded and gained
  entries for every row version the dreamer writes.
- ``events.fts`` becomes ``NULL`` once the event is distilled (``distilled_at`` set): only pending
  events are text-matched (inject's undistilled candidates), so a distilled event's row no longer
  carries its tsvector. It is still a stored generated column, so a pending event's vector is
  computed once, at insert, not on every pack compile.
- The GIN indexes on ``memories.fts`` and ``knowledge.fts`` get ``fastupdate = off``: with it on,
  inserts land in the index's unsorted pending list, which made ~3/4 of ``ix_memories_fts`` as
  left after dreaming (70 vs 19 KB per conversation after ``VACUUM FULL``) and which every
  full-text search scans linearly until a vacuum merges it into the index.

Revision ID: 0009
Revises: 0008
"""
from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0009"
down_revision: Union[str, None] = "0008"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

_TEXT = "to_tsvector('english', coalesce(summary, '') || ' ' || content)"
PENDING_FTS = f"CASE WHEN distilled_at IS NULL THEN {_TEXT} ELSE NULL END"


def _fts(expression: str) -> None:
    op.drop_column("events", "fts")
    op.add_column(
        "events",
        sa.Column("fts", postgresql.TSVECTOR(), sa.Computed(expression, persisted=True), nullable=True),
    )


_GIN = ("memories", "knowledge")


def upgrade() -> None:
    op.drop_index("ix_events_fts", table_name="events", postgresql_using="gin")
    _fts(PENDING_FTS)
    for table in _GIN:
        # Turning fastupdate off leaves entries already pending in the list; a vacuum merges them.
        op.execute(f"ALTER INDEX ix_{table}_fts SET (fastupdate = off)")


def downgrade() -> None:
    for table in _GIN:
        op.execute(f"ALTER INDEX ix_{table}_fts RESET (fastupdate)")
    _fts(_TEXT)
    op.create_index("ix_events_fts", "events", ["fts"], unique=False, postgresql_using="gin")
