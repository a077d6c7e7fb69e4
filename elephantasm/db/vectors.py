"""pgvector helpers shared by the services that pass vectors through raw SQL.

Embeddings are stored at their model's own width (unconstrained ``halfvec``); each width in
:data:`INDEXED_DIMS` has a partial HNSW index on ``(embedding::halfvec(d))`` where
``vector_dims(embedding) = d``, which a query uses only when written with the same expressions and
the width as a literal (:func:`hnsw_distance`, :func:`width_is`). Other widths are scanned exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np
from pgvector.sqlalchemy import HALFVEC
from sqlalchemy import ColumnElement, func, literal_column
from sqlalchemy import cast as sql_cast
from sqlalchemy.engine import Dialect

# The exact text of each float16 bit pattern, filled on first use: formatting a vector becomes a
# table lookup instead of a float repr per element (at most 65,536 short strings).
_HALF_TEXTS: list[str | None] = [None] * (1 << 16)


def _half_texts(bits: list[int]) -> list[str]:
    table = _HALF_TEXTS
    for b in {b for b in bits if table[b] is None}:
        table[b] = repr(float(np.uint16(b).view(np.float16)))
    return cast(list[str], table)


def vector_literal(vector: Sequence[float]) -> str:
    """A pgvector text literal (``[x,y,…]``) for a ``halfvec``, ~5x faster than formatting floats.

    Elements are rounded as ``halfvec`` input rounds them (float4, then half, ties to even) and
    written exactly: the stored value is the same as from full precision. Non-finite or
    out-of-range values are passed on as they are, for ``halfvec`` to reject.
    """
    wide = np.asarray(vector, dtype=np.float64)
    half = wide.astype(np.float32).astype(np.float16)
    if not np.isfinite(half).all():
        return "[" + ",".join(repr(float(x)) for x in wide.tolist()) + "]"
    bits = half.view(np.uint16).tolist()
    table = _half_texts(bits)
    return "[" + ",".join([table[b] for b in bits]) + "]"


INDEXED_DIMS = (256, 384)
"""Widths with an HNSW index: WordLlama (the default, 256); MiniLM, the hash embedder and the
OpenAI-compatible default (384)."""


def width_is(column: str, dim: int) -> str:
    """SQL: ``column`` holds a vector of ``dim`` dimensions (the partial HNSW index's predicate)."""
    return f"vector_dims({column}) = {int(dim)}"


def stored_key(column: str, dim: int) -> str:
    """SQL: the stored vector as the HNSW index of its width sees it (plain for unindexed widths)."""
    return f"({column}::halfvec({int(dim)}))" if dim in INDEXED_DIMS else column


def hnsw_distance(column: str, other: str, dim: int) -> str:
    """SQL: cosine distance between the stored ``column`` and ``other`` (a vector expression of the
    same width), in the form the width's HNSW index answers. Pair it with :func:`width_is`."""
    return f"{stored_key(column, dim)} <=> CAST({other} AS halfvec({int(dim)}))"


def indexed_vector(column: ColumnElement[Any], dim: int) -> tuple[ColumnElement[Any], ColumnElement[bool]]:
    """For ORM statements: (``column`` as the HNSW index of width ``dim`` sees it, the width filter).

    Order by ``key.cosine_distance(vector)`` and filter by the second element, as :func:`hnsw_distance`
    and :func:`width_is` do for raw SQL."""
    key = sql_cast(column, FastHalfVec(dim)) if dim in INDEXED_DIMS else column
    return key, func.vector_dims(column) == literal_column(str(int(dim)))


class FastHalfVec(HALFVEC):
    """pgvector's ``HALFVEC`` column type, binding vectors through :func:`vector_literal` (pgvector's
    own bind formats each float with ``str``, a real cost for the dreamer's hundreds per chunk)."""

    cache_ok = True

    def bind_processor(self, dialect: Dialect) -> Callable[[Any], str | None]:
        """Text literal for a sequence of floats (a string is taken as an already-made literal)."""

        def process(value: Any) -> str | None:
            if value is None or isinstance(value, str):
                return value
            if hasattr(value, "to_list"):  # pgvector's HalfVector
                value = value.to_list()
            return vector_literal(value)

        return process
