"""vector indexes over the binary quantisation: HNSW on bit(d) with Hamming distance, exact re-rank

``ix_<table>_embedding_hnsw<d>`` (memories, knowledge; d = 256, 384) held each vector as a half
float per dimension: ~830 bytes per memory at 256 dimensions, the largest index of the schema.
They now index ``binary_quantize(embedding)::bit(d)`` (one bit per dimension: the sign) with
``bit_hamming_ops``, same partial predicate, same ``m``/``ef_construction``. Queries fetch a
multiple of the rows they need by Hamming distance and re-rank them by the exact cosine on the
stored halfvec (``elephantasm.db.vectors.nearest_ids``).

Downgrade rebuilds the cosine indexes of 0010.

Revision ID: 0017
Revises: 0016
"""

from typing import Sequence, Union

from alembic import op

revision: str = "0017"
down_revision: Union[str, None] = "0016"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

_TABLES = ("memories", "knowledge")
_DIMS = (256, 384)
_HNSW = "WITH (m = 16, ef_construction = 40)"


def _recreate(key: str, ops: str) -> None:
    for table in _TABLES:
        for dim in _DIMS:
            op.execute(f"DROP INDEX IF EXISTS ix_{table}_embedding_hnsw{dim}")
            op.execute(
                f"CREATE INDEX ix_{table}_embedding_hnsw{dim} ON {table} USING hnsw "
                f"(({key.format(dim=dim)}) {ops}) {_HNSW} WHERE vector_dims(embedding) = {dim}"
            )


def upgrade() -> None:
    _recreate("binary_quantize(embedding)::bit({dim})", "bit_hamming_ops")


def downgrade() -> None:
    _recreate("embedding::halfvec({dim})", "halfvec_cosine_ops")
