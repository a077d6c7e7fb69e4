"""Reciprocal rank fusion of the vector and full-text rankings: bounded, order-free, monotone."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from elephantasm.domain.fusion import RRF_K, competition_ranks, fused_ranks, rank_fusion

_cos = st.one_of(st.none(), st.floats(min_value=-1.0, max_value=1.0))
_fts = st.one_of(st.none(), st.floats(min_value=0.0, max_value=2.0))
_signals = st.lists(st.tuples(_cos, _fts), max_size=40)


def best_ranks(signals: list[tuple[float | None, float | None]]) -> list[int | None]:
    """Each candidate's better rank of the two (vector, text); None if it is in neither ranking."""
    return [min((r for r in pair if r is not None), default=None) for pair in zip(*fused_ranks(signals), strict=True)]


def test_ties_share_the_best_rank_and_none_has_none() -> None:
    assert competition_ranks([0.5, 0.9, 0.5, None, 0.1]) == [2, 1, 2, None, 4]
    assert competition_ranks([]) == []


def test_no_text_match_is_no_rank() -> None:
    signals = [(0.2, 0.0), (0.1, 0.3), (None, None)]
    assert fused_ranks(signals) == ([1, 2, None], [None, 1, None])
    assert best_ranks(signals) == [1, 1, None]
    assert best_ranks([]) == []


def test_top_of_both_rankings_is_one_and_missing_from_both_is_none() -> None:
    out = rank_fusion([(0.9, 0.5), (0.1, 0.1), (None, None), (None, 0.0)])
    assert out[0] == 1.0 and out[2] is None and out[3] is None
    assert 0.0 < out[1] < 1.0


def test_one_signal_alone_still_spans_up_to_one() -> None:
    # A vector of another space has no cosine: full text alone decides, and its best is still 1.
    assert rank_fusion([(None, 0.4), (None, 0.1)]) == [1.0, pytest.approx((RRF_K + 1) / (RRF_K + 2), abs=1e-6)]


def test_bad_k_is_refused() -> None:
    with pytest.raises(ValueError, match="k must be > 0"):
        rank_fusion([(0.1, 0.1)], k=0)


@given(_signals, st.randoms(use_true_random=False))
def test_bounded_and_independent_of_order(signals, rnd) -> None:
    out = rank_fusion(signals)
    assert all(v is None or 0.0 < v <= 1.0 for v in out)
    order = list(range(len(signals)))
    rnd.shuffle(order)
    shuffled = rank_fusion([signals[i] for i in order])
    assert [shuffled[order.index(i)] for i in range(len(signals))] == out


@given(_signals)
def test_ranked_at_least_as_well_in_both_never_scores_lower(signals) -> None:
    """Dominance: a candidate whose ranks are no worse in each list has relevance no lower."""
    out = rank_fusion(signals)
    vec, txt = fused_ranks(signals)

    def no_worse(a: int | None, b: int | None) -> bool:
        return b is None or (a is not None and a <= b)

    for i in range(len(signals)):
        for j in range(len(signals)):
            if out[i] is not None and out[j] is not None and no_worse(vec[i], vec[j]) and no_worse(txt[i], txt[j]):
                assert out[i] >= out[j]
