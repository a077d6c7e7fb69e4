"""lean memories: provenance as an array on the row, position-free full-text vectors, rows kept out of TOAST

Measured by ``python -m benchmarks storage`` (``benchmarks/RESULTS.md``, "issue 15 memories storage"):

- ``memories.event_ids uuid[]`` (ascending) replaces the ``memory_events`` link table. A link was a
  ~100-byte row plus its primary-key and event-index entries (~210 bytes a link, four links a
  memory); in the array it is 16 bytes. Every reader goes through the memory: the pack's and the
  API's provenance, merges (the union), export/import; the inspector's "memories of this event" reads
  the event's anima's memories (``ix_memories_org_anima_state``) and tests the array.
- ``memories.fts`` is ``strip()``-ped: the lexemes without their positions (~40 % of the vector).
  Nothing matches phrases; ``ts_rank`` then counts each matched lexeme once.
- ``memories`` gets ``toast_tuple_target = 8160``: a memory row is ~2.2 kB (two 256-d vectors, its
  text and tsvector), just over the default 2,032-byte target, so more than half the rows had their
  turn vectors or content moved to TOAST: ~100 bytes more per moved value (chunk header, TOAST index)
  and one TOAST index probe per such row each time a compile reads its candidates. Kept in the row,
  the table is smaller and a compile reads no TOAST. Rows written before keep their layout until
  rewritten.

Revision ID: 0013
Revises: 0012
"""

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: Union[str, None] = "0012"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

_MEMORY_TEXT = "to_tsvector('english', summary || ' ' || coalesce(content, ''))"

_TO_ARRAY = """
UPDATE memories m SET event_ids = l.ids
FROM (SELECT memory_id, array_agg(event_id ORDER BY event_id) AS ids FROM memory_events GROUP BY memory_id) l
WHERE m.id = l.memory_id
"""
# Links to events that no longer exist are not recreated (the link table's foreign key would refuse them).
_TO_LINKS = """
INSERT INTO memory_events (memory_id, event_id, org_id, anima_id)
SELECT m.id, x.event_id, m.org_id, m.anima_id FROM memories m CROSS JOIN LATERAL unnest(m.event_ids) AS x(event_id)
WHERE EXISTS (SELECT 1 FROM events e WHERE e.id = x.event_id)
ON CONFLICT DO NOTHING
"""


def upgrade() -> None:
    op.add_column(
        "memories",
        sa.Column("event_ids", sa.ARRAY(sa.UUID()), server_default=sa.text("'{}'::uuid[]"), nullable=False),
    )
    op.execute(_TO_ARRAY)
    op.drop_index("ix_memory_events_event", table_name="memory_events")
    op.drop_table("memory_events")
    op.execute(f"ALTER TABLE memories ALTER COLUMN fts SET EXPRESSION AS (strip({_MEMORY_TEXT}))")
    op.execute("ALTER TABLE memories SET (toast_tuple_target = 8160)")


def downgrade() -> None:
    op.execute("ALTER TABLE memories RESET (toast_tuple_target)")
    op.execute(f"ALTER TABLE memories ALTER COLUMN fts SET EXPRESSION AS ({_MEMORY_TEXT})")
    op.create_table(
        "memory_events",
        sa.Column("memory_id", sa.UUID(), nullable=False),
        sa.Column("event_id", sa.UUID(), nullable=False),
        sa.Column("org_id", sa.UUID(), nullable=False),
        sa.Column("anima_id", sa.UUID(), nullable=False),
        sa.ForeignKeyConstraint(["anima_id"], ["animas.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["event_id"], ["events.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["memory_id"], ["memories.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["org_id"], ["orgs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("memory_id", "event_id", name="pk_memory_events"),
    )
    op.create_index("ix_memory_events_event", "memory_events", ["event_id"], unique=False)
    op.execute(_TO_LINKS)
    op.drop_column("memories", "event_ids")
