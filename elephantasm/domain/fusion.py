"""Hybrid relevance by reciprocal rank fusion (RRF) of the vector and full-text rankings of one compile.

Chosen per pack with ``PackConfig.relevance_fusion = "rrf"``; the default is the weighted min-max
of :func:`elephantasm.domain.scoring.contextual_relevance`, which measured better on the quality
benchmark, plain and paraphrased (``benchmarks/RESULTS.md``).

Every candidate of a compile is ranked twice: by cosine similarity to the query (candidates whose
vector is in the server's embedding space) and by full-text rank (candidates that match at least
one query lexeme). Its relevance is ``Σ 1/(k + rank)`` over the rankings it appears in, divided by
the best possible sum (rank 1 in every non-empty ranking), so it lies in [0, 1]:

* ranks, not raw values, so an embedder whose cosines bunch in a narrow band and ``ts_rank``'s
  unbounded scale weigh the same, and no min–max stretch turns noise into a full 0..1 spread;
* a candidate missing from a ranking (no text match, or a vector of another space) simply gets
  nothing from it: relevance falls back to the other signal.

Ties share the best rank of their group (values are rounded first), so the result depends on the
set of candidates only, never on their order. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

RRF_K = 10.0
"""Rank offset: smaller favours the very top of each ranking more. 10 measured a little better than
the usual 60 on the quality benchmark: with ~50–100 candidates, 60 makes rank 1 and rank 20 nearly
equal next to the recency and importance factors."""
VALUE_DIGITS = 6


def competition_ranks(values: Sequence[float | None]) -> list[int | None]:
    """1-based rank of each value, highest first; equal values share the best rank; None → None."""
    rounded = [None if v is None else round(v, VALUE_DIGITS) for v in values]
    order = sorted({v for v in rounded if v is not None}, reverse=True)
    counts: dict[float, int] = {}
    for v in rounded:
        if v is not None:
            counts[v] = counts.get(v, 0) + 1
    first: dict[float, int] = {}
    seen = 0
    for v in order:
        first[v] = seen + 1
        seen += counts[v]
    return [None if v is None else first[v] for v in rounded]


def fused_ranks(
    signals: Sequence[tuple[float | None, float | None]],
) -> tuple[list[int | None], list[int | None]]:
    """(vector rank, text rank) per candidate; a text rank of 0 or less is no match (no rank)."""
    cos = [c for c, _ in signals]
    fts = [None if f is None or f <= 0 else f for _, f in signals]
    return competition_ranks(cos), competition_ranks(fts)


def rank_fusion(signals: Sequence[tuple[float | None, float | None]], k: float = RRF_K) -> list[float | None]:
    """Relevance in [0, 1] per ``(cosine, fts_rank)`` pair, by reciprocal rank fusion (module doc).

    None for a candidate in neither ranking (no vector in this space and no text match).
    """
    if k <= 0:
        raise ValueError("k must be > 0")
    vec, txt = fused_ranks(signals)
    lists = sum(1 for ranks in (vec, txt) if any(r is not None for r in ranks))
    best = lists / (k + 1.0)
    out: list[float | None] = []
    for rv, rt in zip(vec, txt, strict=True):
        if rv is None and rt is None:
            out.append(None)
            continue
        total = (1.0 / (k + rv) if rv is not None else 0.0) + (1.0 / (k + rt) if rt is not None else 0.0)
        out.append(round(min(1.0, total / best), VALUE_DIGITS))
    return out
