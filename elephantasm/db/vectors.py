"""pgvector helpers shared by the services that pass vectors through raw SQL.

Embeddings are stored at their model's own width (migration 0010): the ``embedding`` columns are
unconstrained ``halfvec``, and each width in :data:`INDEXED_DIMS` has a partial HNSW index on the
binary quantisation of the vector, ``(binary_quantize(embedding)::bit(d))`` with Hamming distance,
for rows ``WHERE vector_dims(embedding) = d`` (migration 0017: one bit per dimension instead of a
half float). A nearest-neighbour query fetches ``OVERSAMPLE`` times the rows it needs by Hamming
distance through that index and re-ranks them by the exact cosine on the stored ``halfvec``
(:func:`nearest_ids`). The index answers only when the query is written with the same expressions,
the width as a literal (a bound parameter cannot prove the partial index's predicate):
:func:`hamming_distance` and :func:`width_is` write them. Other widths (e.g. a remote embedder at
1,536) work too, by an exact scan of the anima's rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np
from pgvector.sqlalchemy import BIT, HALFVEC
from sqlalchemy import ColumnElement, Float, Table, any_, bindparam, func, literal_column, select
from sqlalchemy import cast as sql_cast
from sqlalchemy.engine import Dialect

# The exact value of each float16 bit pattern as text, filled on first use (a float16 is exact in
# float64, so its repr is exact): formatting a vector becomes a table lookup, not a float repr per
# element. At most 65,536 short strings.
_HALF_TEXTS: list[str | None] = [None] * (1 << 16)


def _half_texts(bits: list[int]) -> list[str]:
    table = _HALF_TEXTS
    for b in {b for b in bits if table[b] is None}:
        table[b] = repr(float(np.uint16(b).view(np.float16)))
    return cast(list[str], table)


def vector_literal(vector: Sequence[float]) -> str:
    """A pgvector text literal (``[x,y,…]``) for a ``halfvec``, ~5x faster than formatting floats.

    Each element is rounded as pgvector's ``halfvec`` input rounds it (to float4, then to the
    nearest half, ties to even) and written exactly, so the stored value is the same as from the
    full-precision text. Non-finite or out-of-half-range values are for ``halfvec`` to reject,
    so they are passed on as they are.
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


OVERSAMPLE = 4
"""Rows fetched by Hamming distance per row wanted by cosine (the exact re-rank's headroom)."""


def stored_key(column: str, dim: int) -> str:
    """SQL: the stored vector as the HNSW index of its width sees it: its binary quantisation."""
    return f"(binary_quantize({column})::bit({int(dim)}))"


def hamming_distance(column: str, other: str, dim: int) -> str:
    """SQL: Hamming distance between the binary quantisations of the stored ``column`` and of
    ``other`` (a vector expression of the same width), in the form the width's HNSW index answers.
    Pair it with :func:`width_is`; only for widths in :data:`INDEXED_DIMS`."""
    return f"{stored_key(column, dim)} <~> binary_quantize(CAST({other} AS halfvec({int(dim)})))::bit({int(dim)})"


def cosine_distance(column: str, other: str, dim: int) -> str:
    """SQL: exact cosine distance between the stored ``column`` and ``other`` (width ``dim``)."""
    return f"{column} <=> CAST({other} AS halfvec({int(dim)}))"


def nearest_ids(table: str, a: str, where: str, other: str, dim: int, k: str, extra: str = "") -> str:
    """SQL: the ``k`` rows of ``{table} {a}`` matching ``where`` nearest to ``other`` by cosine, best
    first, as ``(id, distance{extra})`` (``extra``: more ``, {a}.col`` select items, qualified).

    For an indexed width: ``OVERSAMPLE × k`` rows by Hamming distance through the HNSW index, then
    the exact cosine on the stored ``halfvec`` re-ranks them (ids break ties). ``where`` must
    include :func:`width_is` for the width. Other widths: an exact ordered scan.
    """
    exact = cosine_distance(f"{a}.embedding", other, dim)
    if dim not in INDEXED_DIMS:
        return f"SELECT {a}.id, {exact} AS distance{extra} FROM {table} {a} WHERE {where} ORDER BY 2, {a}.id LIMIT {k}"
    inner = (
        f"SELECT {a}.id, {exact} AS distance{extra} FROM {table} {a} WHERE {where} "
        f"ORDER BY {hamming_distance(f'{a}.embedding', other, dim)} LIMIT {OVERSAMPLE} * ({k})"
    )
    return f"SELECT * FROM ({inner}) {a}_bq ORDER BY {a}_bq.distance, {a}_bq.id LIMIT {k}"


def hamming_key(column: ColumnElement[Any], vector: Sequence[float]) -> ColumnElement[Any]:
    """For ORM statements: the Hamming distance to ``vector`` that the HNSW index of its width orders by."""
    bits = BIT(len(vector))
    query = bindparam(None, list(vector), type_=FastHalfVec())
    stored = sql_cast(func.binary_quantize(column), bits)
    return stored.op("<~>", return_type=Float())(
        sql_cast(func.binary_quantize(sql_cast(query, FastHalfVec(len(vector)))), bits)
    )


def nearest_filter(
    table: Table, vector: Sequence[float], limit: int, filters: Callable[[Any], list[ColumnElement[bool]]]
) -> list[ColumnElement[bool]]:
    """For ORM statements over ``table``: conditions keeping the rows of ``filters(table)`` that can
    be among the ``limit`` nearest to ``vector`` by cosine (the caller orders by the exact cosine).

    The width filter always; for an indexed width also "one of the ``OVERSAMPLE × limit`` rows
    nearest by Hamming distance", read through the width's HNSW index in a subquery of its own (an
    alias of ``table``: the outer statement's columns are not correlated into it), as
    :func:`nearest_ids` does for raw SQL. ``filters`` takes the table (or the alias) to filter.
    """
    dim = len(vector)
    width = func.vector_dims(table.c.embedding) == literal_column(str(int(dim)))
    if dim not in INDEXED_DIMS:
        return [width, *filters(table)]
    near = table.alias("near")
    inner = (
        select(near.c.id)
        .where(func.vector_dims(near.c.embedding) == literal_column(str(int(dim))), *filters(near))
        .order_by(hamming_key(near.c.embedding, vector))
        .limit(OVERSAMPLE * limit)
    )
    return [width, table.c.id == any_(func.array(inner.scalar_subquery()))]


class FastHalfVec(HALFVEC):
    """pgvector's ``HALFVEC`` column type, binding vectors through :func:`vector_literal`.

    pgvector's own bind formats each float with ``str`` (≈ 0.3–0.7 ms per 384-d vector); the
    dreamer writes hundreds of vectors per chunk, where that was ≈ 10 % of a run.
    """

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
