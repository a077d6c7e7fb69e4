"""recall state in its own narrow table: memory_recalls

Serving a memory in a pack records a recall (``services/packs/recalls.py``). The two columns it
updated, ``memories.recall_count`` and ``memories.last_recalled_at``, were INCLUDE columns of the
pack covering indexes (0002), so the update was never HOT: each recall wrote a whole new ~2.5 kB
memory row version and a new entry in every index of memories, HNSW and GIN included
(``benchmarks/RESULTS.md``, "issue 15 compile": 100 recalls at 10k memories took 85–100 ms and
1.7 MB of WAL).

- ``memory_recalls``: one row per memory ever recalled (``memory_id`` primary key, cascading with
  the memory), ``org_id``/``anima_id`` copied from it, ``recall_count``, ``last_recalled_at``.
  No index holds the updated columns and ``fillfactor`` leaves room, so the batcher's upserts
  are HOT. No row means never recalled (count 0, never).
- The pack covering indexes of memories are rebuilt without the two columns, which are dropped.

Existing values move to the new table (rows with a count or a time only); the downgrade moves
them back.

Revision ID: 0014
Revises: 0013
"""

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: Union[str, None] = "0013"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

FILLFACTOR = 70
MEMORY_LIVE = "deleted_at IS NULL AND merged_into IS NULL AND state <> 'archived'"
HAPPENED = "coalesce(time_end, time_start)"
# The covering columns of 0002 without the recall pair, and with it (for the downgrade).
COLUMNS = ["importance", "confidence", "time_start", "time_end", "created_at", "id"]
COLUMNS_0002 = ["importance", "confidence", "time_start", "time_end", "last_recalled_at", "created_at", "recall_count", "id"]


def _pack_indexes(columns: list[str]) -> None:
    op.create_index(
        "ix_memories_pack_happened", "memories", ["org_id", "anima_id", sa.text(HAPPENED)],
        unique=False, postgresql_include=columns, postgresql_where=sa.text(MEMORY_LIVE),
    )
    op.create_index(
        "ix_memories_pack_importance", "memories", ["org_id", "anima_id", "importance"], unique=False,
        postgresql_include=[c for c in columns if c != "importance"], postgresql_where=sa.text(MEMORY_LIVE),
    )


def _drop_pack_indexes() -> None:
    op.drop_index("ix_memories_pack_importance", table_name="memories")
    op.drop_index("ix_memories_pack_happened", table_name="memories")


def upgrade() -> None:
    op.create_table(
        "memory_recalls",
        sa.Column("memory_id", sa.UUID(), nullable=False),
        sa.Column("org_id", sa.UUID(), nullable=False),
        sa.Column("anima_id", sa.UUID(), nullable=False),
        sa.Column("recall_count", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("last_recalled_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["memory_id"], ["memories.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("memory_id"),
        postgresql_with={"fillfactor": FILLFACTOR},
    )
    op.execute(
        "INSERT INTO memory_recalls (memory_id, org_id, anima_id, recall_count, last_recalled_at) "
        "SELECT id, org_id, anima_id, recall_count, last_recalled_at FROM memories "
        "WHERE recall_count <> 0 OR last_recalled_at IS NOT NULL"
    )
    _drop_pack_indexes()
    op.drop_column("memories", "last_recalled_at")
    op.drop_column("memories", "recall_count")
    _pack_indexes(COLUMNS)


def downgrade() -> None:
    _drop_pack_indexes()
    op.add_column("memories", sa.Column("recall_count", sa.Integer(), server_default=sa.text("0"), nullable=False))
    op.add_column("memories", sa.Column("last_recalled_at", sa.DateTime(timezone=True), nullable=True))
    op.execute(
        "UPDATE memories m SET recall_count = r.recall_count, last_recalled_at = r.last_recalled_at "
        "FROM memory_recalls r WHERE r.memory_id = m.id"
    )
    _pack_indexes(COLUMNS_0002)
    op.drop_table("memory_recalls")
