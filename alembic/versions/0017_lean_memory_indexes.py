"""leaner memory indexes: pack indexes keyed on the anima alone; no ix_memories_anima_time_end

1. The three covering pack indexes of memories (``ix_memories_pack_happened``,
``ix_memories_pack_importance``, ``ix_memories_pack_score``) lead with ``anima_id`` instead of
``(org_id, anima_id)``: 16 bytes less in each of ~104-byte entries (INCLUDE indexes are never
deduplicated). An anima belongs to one org, so the anima alone selects the same entries; the pack's
long-term statement leaves the org test out of its index-only arms and tests it on the few hundred
rows it finally reads by primary key (``services/packs/sql.MEMORY_OWNER``), so it still returns no
row of another org, and the rows, hence the packs, are the same.

2. ``ix_memories_anima_time_end`` (anima_id, time_end; 0001) is dropped: no statement reads it. Its
one candidate reader, the pack's session-layer statement, orders by ``time_end DESC NULLS LAST``,
which an ascending NULLS LAST index cannot give (its backward scan is DESC NULLS FIRST), and filters
on ``coalesce(time_end, time_start, created_at)``, which it does not hold: that statement reads
``ix_memories_anima_session`` and sorts its few rows, with or without it (same plan and time,
measured at 10k memories). The memory listing orders by ``coalesce(time_end, created_at)``.

``storage --size small``, KB per conversation as left: time_end index ~8, pack indexes ~61.

Revision ID: 0017
Revises: 0016
"""

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: Union[str, None] = "0016"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

MEMORY_LIVE = "deleted_at IS NULL AND merged_into IS NULL AND state <> 'archived'"
# Exactly elephantasm.db.models.memory_score_key(): the statements use this text.
SCORE_KEY = (
    "(greatest(0.0, least(1.0, coalesce(importance, 0.5))) + 0.4 * "
    "greatest(0.0, least(1.0, coalesce(confidence, 0.5))))"
)
COLUMNS = ["importance", "confidence", "time_start", "time_end", "created_at", "id"]
# name → (key after the owner columns, INCLUDE columns), as 0014 and 0016 made them.
PACK_INDEXES = {
    "ix_memories_pack_happened": (sa.text("coalesce(time_end, time_start)"), COLUMNS),
    "ix_memories_pack_importance": ("importance", [c for c in COLUMNS if c != "importance"]),
    "ix_memories_pack_score": (sa.text(SCORE_KEY), ["importance", "confidence", "time_start", "time_end", "id"]),
}


def _pack_indexes(owner: list[str]) -> None:
    for name, (key, include) in PACK_INDEXES.items():
        op.drop_index(name, table_name="memories")
        op.create_index(
            name, "memories", [*owner, key], unique=False,
            postgresql_include=include, postgresql_where=sa.text(MEMORY_LIVE),
        )


def upgrade() -> None:
    op.drop_index("ix_memories_anima_time_end", table_name="memories")
    _pack_indexes(["anima_id"])


def downgrade() -> None:
    _pack_indexes(["org_id", "anima_id"])
    op.create_index("ix_memories_anima_time_end", "memories", ["anima_id", "time_end"], unique=False)
