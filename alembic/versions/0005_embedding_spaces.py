"""embedding spaces: record which embedder made each vector

``memories.embedding_space`` and ``knowledge.embedding_space`` hold the label of the embedder
(``name/dim/version``, e.g. ``wordllama:l2_supercat/256/0.4.0.post1``) that made the row's
``embedding``. Vectors are compared only within one space: a server whose embedder differs uses
full-text relevance for the other rows until ``elephantasm reembed`` has re-embedded them.

The vector columns keep their fixed width (``halfvec(384)``, the documented maximum): a model
with fewer dimensions is zero-padded, which leaves every cosine unchanged, so the HNSW indexes
stay as they are. Vectors written before this revision have no recorded space (NULL): which
embedder made them is unknown, so they count as another space until re-embedded.

A partial index per table finds the rows still to re-embed without scanning the heap.

Revision ID: 0005
Revises: 0003
"""
from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: Union[str, None] = "0004"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

_TABLES = ("memories", "knowledge")


def upgrade() -> None:
    for table in _TABLES:
        op.add_column(table, sa.Column("embedding_space", sa.String(length=200), nullable=True))
        op.create_index(
            f"ix_{table}_embedding_space", table, ["embedding_space"],
            postgresql_where=sa.text("embedding IS NOT NULL"),
        )


def downgrade() -> None:
    for table in _TABLES:
        op.drop_index(f"ix_{table}_embedding_space", table_name=table)
        op.drop_column(table, "embedding_space")
