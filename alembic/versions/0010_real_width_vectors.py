"""vectors at their model's own width: unconstrained halfvec, one partial HNSW index per width

Until now every ``embedding`` was a ``halfvec(384)``: the default embedder (WordLlama, 256-d) was
zero-padded to 384, which cost ~256 bytes per vector in the heap, more in the HNSW index, and 50 %
more distance work on every HNSW insert and search.

- ``memories.embedding`` and ``knowledge.embedding`` become unconstrained ``halfvec``.
- Existing vectors are cut to the width recorded in their ``embedding_space`` label
  (``name/dim/version``) when what is cut off is zero padding, which changes no cosine, so no
  re-embedding is needed. A vector whose label names a smaller width but whose tail is not zero
  (no embedder ever wrote one) keeps its values and loses its label (``embedding_space`` NULL):
  ``elephantasm reembed`` then rewrites it, as for any vector of unknown space. Vectors without a
  label (made before 0005) stay as they are, stale until re-embedded.
- ``ix_<table>_embedding_hnsw`` is replaced by a partial expression index per indexed width,
  ``ix_<table>_embedding_hnsw256`` and ``…384``:
  ``USING hnsw ((embedding::halfvec(d)) halfvec_cosine_ops) WHERE vector_dims(embedding) = d``.
  Other widths (a remote embedder configured at, say, 1,536) are found by an exact scan.
- The new indexes are built with ``ef_construction = 40`` (was 64; ``m`` stays 16): measured on
  20k real 256-d embeddings, an insert costs 17–30 % less backend CPU (the dreamer's writes are
  mostly HNSW upkeep) for the same recall@30 of the anima-filtered search (0.995–0.996 vs 0.997;
  ``m = 12`` cost 0.3–0.6 point, ``m = 8`` two points). ``benchmarks/RESULTS.md``, issue 14.

Downgrade pads every vector back to 384 with zeros; it refuses when a vector is wider than 384
(nothing that wide fitted before this revision, and dropping it would lose data).

Revision ID: 0010
Revises: 0009
"""
from typing import Sequence, Union

from alembic import op
from sqlalchemy import text

revision: str = "0010"
down_revision: Union[str, None] = "0009"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

_TABLES = ("memories", "knowledge")
_DIMS = (256, 384)
_OLD_DIM = 384
_HNSW = "WITH (m = 16, ef_construction = 40)"
_OLD_HNSW = "WITH (m = 16, ef_construction = 64)"
# The model's width from a space label ``name/dim/version`` (a name may itself contain '/').
_LABEL_DIM = r"substring(embedding_space from '/([0-9]+)/[^/]*$')::int"
_PADDED = f"({_LABEL_DIM} < vector_dims(embedding))"
_TAIL = f"subvector(embedding, {_LABEL_DIM} + 1, vector_dims(embedding) - {_LABEL_DIM})"


def upgrade() -> None:
    for table in _TABLES:
        # Not padding after all: keep the values, forget the (wrong) label so reembed rewrites it.
        op.execute(
            f"UPDATE {table} SET embedding_space = NULL "
            f"WHERE embedding IS NOT NULL AND {_PADDED} AND l2_norm({_TAIL}) > 0"
        )
        op.execute(f"DROP INDEX IF EXISTS ix_{table}_embedding_hnsw")
        op.execute(
            f"ALTER TABLE {table} ALTER COLUMN embedding TYPE halfvec USING "
            f"CASE WHEN {_PADDED} THEN subvector(embedding, 1, {_LABEL_DIM}) ELSE embedding::halfvec END"
        )
        for dim in _DIMS:
            op.execute(
                f"CREATE INDEX ix_{table}_embedding_hnsw{dim} ON {table} USING hnsw "
                f"((embedding::halfvec({dim})) halfvec_cosine_ops) {_HNSW} WHERE vector_dims(embedding) = {dim}"
            )


def downgrade() -> None:
    bind = op.get_bind()
    for table in _TABLES:
        wide = bind.execute(text(f"SELECT count(*) FROM {table} WHERE vector_dims(embedding) > {_OLD_DIM}")).scalar()
        if wide:
            raise RuntimeError(
                f"cannot downgrade below 0010: {wide} {table} vector(s) are wider than {_OLD_DIM} dimensions; "
                "re-embed them with an embedder of at most 384 dimensions first"
            )
    for table in _TABLES:
        for dim in _DIMS:
            op.execute(f"DROP INDEX IF EXISTS ix_{table}_embedding_hnsw{dim}")
        op.execute(
            f"ALTER TABLE {table} ALTER COLUMN embedding TYPE halfvec({_OLD_DIM}) USING "
            f"CASE WHEN vector_dims(embedding) < {_OLD_DIM} THEN (CAST(embedding AS real[]) || "
            f"array_fill(0::real, ARRAY[{_OLD_DIM} - vector_dims(embedding)]))::halfvec({_OLD_DIM}) "
            f"ELSE embedding::halfvec({_OLD_DIM}) END"
        )
        op.execute(
            f"CREATE INDEX ix_{table}_embedding_hnsw ON {table} USING hnsw (embedding halfvec_cosine_ops) {_OLD_HNSW}"
        )
