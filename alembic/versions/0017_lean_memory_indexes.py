"""leaner memory indexes: the importance index without covering columns

``ix_memories_pack_importance`` (org, anima, importance; 0002/0014) covered every column the
four-factor score reads and was read by two arms of the pack's long-term statement: every
statement's seed ("the most important ``:seed`` rows") and the no-query presets' older rows above
an importance bound. The second now walks ``ix_memories_pack_score`` (0016: importance + 0.4 ×
confidence, clamped) as the query presets' already did: the key's bound holds with decay weighed
too (its term is at most ``w_fresh``), so the arm keeps its rows (``services/packs/topk.py``). The
seed must stay "by importance" (the arms' rows beyond the top k follow from it, and packs are
byte-stable), so the index stays, keyed on (anima, importance) only: the seed reads its ~200 rows
from the heap (which also checks the org), and an entry is 36 bytes instead of 108.
The score index is rebuilt covering ``created_at`` too, which the decay term reads, so the
no-query arm stays index-only. ``storage --size small``: the importance index ~20 KB per
conversation as left before.

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
SCORE_INCLUDE_0016 = ["importance", "confidence", "time_start", "time_end", "id"]
SCORE_INCLUDE = ["importance", "confidence", "time_start", "time_end", "created_at", "id"]
IMPORTANCE_INCLUDE_0014 = ["confidence", "time_start", "time_end", "created_at", "id"]


def _score_index(include: list[str]) -> None:
    op.create_index(
        "ix_memories_pack_score", "memories", ["org_id", "anima_id", sa.text(SCORE_KEY)], unique=False,
        postgresql_include=include, postgresql_where=sa.text(MEMORY_LIVE),
    )


def _importance_index(columns: list[str], include: list[str]) -> None:
    op.create_index(
        "ix_memories_pack_importance", "memories", columns, unique=False,
        postgresql_include=include, postgresql_where=sa.text(MEMORY_LIVE),
    )


def upgrade() -> None:
    op.drop_index("ix_memories_pack_importance", table_name="memories")
    _importance_index(["anima_id", "importance"], [])
    op.drop_index("ix_memories_pack_score", table_name="memories")
    _score_index(SCORE_INCLUDE)


def downgrade() -> None:
    op.drop_index("ix_memories_pack_score", table_name="memories")
    _score_index(SCORE_INCLUDE_0016)
    op.drop_index("ix_memories_pack_importance", table_name="memories")
    _importance_index(["org_id", "anima_id", "importance"], IMPORTANCE_INCLUDE_0014)
