"""cheaper cold compiles: memories indexed in the query presets' score order; pack history as text

1. ``ix_memories_pack_score``. A pack compile with a query scores long-term memories by importance
and confidence only (recency and freshness step aside: ``domain/presets.query_weights``). Its pruned four-factor arm read, at
100k memories, ~22.8k index tuples of ``ix_memories_pack_importance``: the importance bound must
assume confidence 1 for every row. This index is keyed on importance + 0.4 × confidence (both
clamped as the score clamps them; 0.4 is confidence's weight ÷ importance's in the
``conversational`` and ``important`` presets), so the arm finds its k-th best score from the first
k rows in that order and then reads only the range that can reach it (``services/packs/topk.py``).
It covers what that arm's score reads (index-only scans). The score itself stays the statement's,
so the rows chosen are the same.

2. ``memory_packs.content`` is ``text``, not ``jsonb``. Every cold compile records its pack (~110 kB
of JSON at 4,000 tokens); parsing it into jsonb cost Postgres ~1.1 ms more per compile than
storing the text (INSERT 2.5–2.9 vs 1.4–1.7 ms, measured), and nothing queries inside it: the
history API returns it whole, and forgetting matches ids in its text. The downgrade parses it back.

Revision ID: 0016
Revises: 0015
"""

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0016"
down_revision: Union[str, None] = "0015"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

MEMORY_LIVE = "deleted_at IS NULL AND merged_into IS NULL AND state <> 'archived'"
# Exactly elephantasm.db.models.memory_score_key(): the statements use this text.
SCORE_KEY = (
    "(greatest(0.0, least(1.0, coalesce(importance, 0.5))) + 0.4 * "
    "greatest(0.0, least(1.0, coalesce(confidence, 0.5))))"
)


def upgrade() -> None:
    op.alter_column("memory_packs", "content", server_default=None)
    op.alter_column("memory_packs", "content", type_=sa.Text(), postgresql_using="content::text")
    op.alter_column("memory_packs", "content", server_default=sa.text("'{}'::text"))
    op.create_index(
        "ix_memories_pack_score", "memories", ["org_id", "anima_id", sa.text(SCORE_KEY)], unique=False,
        postgresql_include=["importance", "confidence", "time_start", "time_end", "id"],
        postgresql_where=sa.text(MEMORY_LIVE),
    )


def downgrade() -> None:
    op.drop_index("ix_memories_pack_score", table_name="memories")
    op.alter_column("memory_packs", "content", server_default=None)
    op.alter_column("memory_packs", "content", type_=postgresql.JSONB(), postgresql_using="content::jsonb")
    op.alter_column("memory_packs", "content", server_default=sa.text("'{}'::jsonb"))
