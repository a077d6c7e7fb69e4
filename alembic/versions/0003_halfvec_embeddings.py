"""Half-precision embeddings (halfvec) for memories and knowledge.

Halves the bytes of every embedding in the heap and in its HNSW index (the storage benchmark's
largest item after events). The HNSW indexes are rebuilt with ``halfvec_cosine_ops``.

Revision ID: 0003
Revises: 0002
"""
from typing import Sequence, Union

from alembic import op

revision: str = "0003"
down_revision: Union[str, None] = "0002"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

_TABLES = ("memories", "knowledge")


def _convert(kind: str, ops: str) -> None:
    for table in _TABLES:
        op.execute(f"DROP INDEX IF EXISTS ix_{table}_embedding_hnsw")
        op.execute(f"ALTER TABLE {table} ALTER COLUMN embedding TYPE {kind}(384) USING embedding::{kind}(384)")
        op.execute(
            f"CREATE INDEX ix_{table}_embedding_hnsw ON {table} USING hnsw (embedding {ops}) "
            "WITH (m = 16, ef_construction = 64)"
        )


def upgrade() -> None:
    _convert("halfvec", "halfvec_cosine_ops")


def downgrade() -> None:
    _convert("vector", "vector_cosine_ops")
