"""memory turn vectors

``memories.turn_vectors`` (bytea, nullable): the vectors of a memory's fact-bearing turns (the
user's), int8 rows with a small header (``elephantasm/domain/turn_vectors.py``), in the memory's
``embedding_space``. A pack's relevance blends the summary's cosine with the best turn's, so a fact
inside a long noisy exchange is not diluted by the rest of it. Existing rows keep NULL and rank by
their summary alone; no index (the column is read only for candidates already selected).

Revision ID: 0008
Revises: 0007
"""
from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: Union[str, None] = "0007"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.add_column("memories", sa.Column("turn_vectors", sa.LargeBinary(), nullable=True))


def downgrade() -> None:
    op.drop_column("memories", "turn_vectors")
