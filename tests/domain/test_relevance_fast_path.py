"""contextual_relevance's per-candidate weighted mean is written out (``_weighted_pair``); it must
give the same floats as the generic ``sum(w * v) / sum(w)`` over the signals present."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from elephantasm.domain.scoring import CONTEXT_COSINE_WEIGHT, SCORE_DIGITS, _weighted_pair, contextual_relevance


def generic_mean(a: float | None, b: float | None) -> float:
    parts = [(w, v) for w, v in ((CONTEXT_COSINE_WEIGHT, a), (1.0 - CONTEXT_COSINE_WEIGHT, b)) if v is not None]
    x = sum(w * v for w, v in parts) / sum(w for w, _ in parts)
    return round(0.0 if x <= 0.0 else 1.0 if x >= 1.0 else float(x), SCORE_DIGITS)


_signal = st.one_of(st.none(), st.floats(-0.5, 1.5, allow_nan=False))


@settings(max_examples=2000, deadline=None)
@given(_signal, _signal)
def test_same_floats_as_the_generic_mean(a: float | None, b: float | None) -> None:
    if a is None and b is None:
        return  # contextual_relevance falls back to fuse_relevance there
    assert _weighted_pair(a, b).hex() == generic_mean(a, b).hex()


def test_branches_through_contextual_relevance() -> None:
    # both signals spread; only cosines spread; only text ranks spread
    both = contextual_relevance([(0.9, 0.3), (0.2, 0.0), (0.5, None)])
    assert both == [generic_mean(1.0, 1.0), generic_mean(0.0, 0.0), generic_mean(1.0 - 0.4 / 0.7, None)]
    only_cos = contextual_relevance([(0.9, 0.2), (0.4, 0.2)])
    assert only_cos == [generic_mean(1.0, None), generic_mean(0.0, None)]
    only_fts = contextual_relevance([(0.5, 0.4), (0.5, 0.0)])
    assert only_fts == [generic_mean(None, 1.0), generic_mean(None, 0.0)]


def reference_relevance(signals: list[tuple[float | None, float | None]]) -> list[float | None]:
    """contextual_relevance as it was written before its clamps and pairs were written out."""
    from elephantasm.domain.scoring import MIN_COSINE_SPREAD, MIN_FTS_SPREAD, _clamp01, _spread, fuse_relevance

    cos = [None if c is None else round(_clamp01(c), SCORE_DIGITS) for c, _ in signals]
    fts = [None if f is None else round(max(0.0, f), SCORE_DIGITS) for _, f in signals]
    n_cos, n_fts = _spread(cos, MIN_COSINE_SPREAD), _spread(fts, MIN_FTS_SPREAD)
    none = [None] * len(signals)
    return [
        _weighted_pair(a, b) if a is not None or b is not None else fuse_relevance(c, f)
        for (c, f), a, b in zip(signals, n_cos or none, n_fts or none, strict=True)
    ]


_wild = st.one_of(st.none(), st.floats(-0.5, 1.5), st.sampled_from([0.0, -0.0, 1.0, 0.3, float("nan")]))


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.tuples(_wild, _wild), max_size=12))
def test_same_floats_as_the_reference(signals: list[tuple[float | None, float | None]]) -> None:
    got, want = contextual_relevance(signals), reference_relevance(signals)
    assert [None if v is None else v.hex() for v in got] == [None if v is None else v.hex() for v in want]
