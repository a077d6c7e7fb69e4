"""pack candidate indexes

Covering partial indexes for inject's four-factor top-k: every live memory (and current
knowledge item) of an anima is scored from the index alone (an index-only scan of ~80-byte
entries) instead of the heap, whose rows carry a 1.5 kB embedding each.

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


def upgrade() -> None:
    op.create_index(
        'ix_memories_pack_candidates', 'memories', ['org_id', 'anima_id'], unique=False,
        postgresql_include=['importance', 'confidence', 'time_start', 'time_end', 'last_recalled_at',
                            'created_at', 'recall_count', 'id'],
        postgresql_where=sa.text(MEMORY_LIVE),
    )
    op.create_index(
        'ix_knowledge_pack_candidates', 'knowledge', ['org_id', 'anima_id'], unique=False,
        postgresql_include=['importance', 'confidence', 'valid_from', 'created_at', 'id'],
        postgresql_where=sa.text(KNOWLEDGE_CURRENT),
    )


def downgrade() -> None:
    op.drop_index('ix_knowledge_pack_candidates', table_name='knowledge', postgresql_where=sa.text(KNOWLEDGE_CURRENT))
    op.drop_index('ix_memories_pack_candidates', table_name='memories', postgresql_where=sa.text(MEMORY_LIVE))
