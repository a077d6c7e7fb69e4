"""pack candidate indexes

Covering partial indexes for inject's four-factor top-k (``elephantasm/services/packs/topk.py``):
for every live memory and current knowledge item of an anima, one keyed on when it happened and
one on importance, each carrying every column the score needs. The top-k then reads short
index ranges (index-only) instead of scoring every heap row, whose 1.5 kB embedding makes a
scan of the anima's rows expensive.

Also extended statistics telling the planner that ``anima_id`` determines ``org_id``: without
them it multiplies both selectivities, underestimates an anima's rows by the org's share, and
picks an exact cosine sort over the anima's rows instead of the HNSW index.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 16:10:00.000000
"""
from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = '0002'
down_revision: Union[str, None] = '0001'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

MEMORY_LIVE = "deleted_at IS NULL AND merged_into IS NULL AND state <> 'archived'"
KNOWLEDGE_CURRENT = "deleted_at IS NULL AND valid_to IS NULL AND superseded_by IS NULL"
MEMORY_COLUMNS = ['importance', 'confidence', 'time_start', 'time_end', 'last_recalled_at', 'created_at',
                  'recall_count', 'id']
KNOWLEDGE_COLUMNS = ['importance', 'confidence', 'valid_from', 'created_at', 'id']
STATISTICS_TABLES = ('events', 'memories', 'knowledge')


def upgrade() -> None:
    for table in STATISTICS_TABLES:
        op.execute(f"CREATE STATISTICS IF NOT EXISTS st_{table}_org_anima (dependencies) ON org_id, anima_id FROM {table}")
    op.create_index(
        'ix_memories_pack_happened', 'memories', ['org_id', 'anima_id', sa.text('coalesce(time_end, time_start)')],
        unique=False, postgresql_include=MEMORY_COLUMNS, postgresql_where=sa.text(MEMORY_LIVE),
    )
    op.create_index(
        'ix_memories_pack_importance', 'memories', ['org_id', 'anima_id', 'importance'], unique=False,
        postgresql_include=[c for c in MEMORY_COLUMNS if c != 'importance'], postgresql_where=sa.text(MEMORY_LIVE),
    )
    op.create_index(
        'ix_knowledge_pack_happened', 'knowledge', ['org_id', 'anima_id', sa.text('coalesce(valid_from, created_at)')],
        unique=False, postgresql_include=KNOWLEDGE_COLUMNS, postgresql_where=sa.text(KNOWLEDGE_CURRENT),
    )
    op.create_index(
        'ix_knowledge_pack_importance', 'knowledge', ['org_id', 'anima_id', 'importance'], unique=False,
        postgresql_include=[c for c in KNOWLEDGE_COLUMNS if c != 'importance'],
        postgresql_where=sa.text(KNOWLEDGE_CURRENT),
    )


def downgrade() -> None:
    for table in STATISTICS_TABLES:
        op.execute(f"DROP STATISTICS IF EXISTS st_{table}_org_anima")
    op.drop_index('ix_knowledge_pack_importance', table_name='knowledge')
    op.drop_index('ix_knowledge_pack_happened', table_name='knowledge')
    op.drop_index('ix_memories_pack_importance', table_name='memories')
    op.drop_index('ix_memories_pack_happened', table_name='memories')
