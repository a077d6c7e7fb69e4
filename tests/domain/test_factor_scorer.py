"""FactorScorer: skipping the factors a weighting ignores gives the very score computing them gives,
and score_candidate is the scorer of one candidate."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from elephantasm.domain.scoring import FactorScorer, InvalidScoringError, ScoringWeights, score_candidate

AS_OF = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
ZONES = [UTC, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-8)), None]

unit_or_wild = st.one_of(
    st.none(), st.floats(0, 1), st.floats(-2, 3, allow_nan=False), st.sampled_from([0.0, 0.5, 1.0, -0.0])
)


@st.composite
def times(draw: st.DrawFn) -> datetime | None:
    if draw(st.booleans()) and draw(st.booleans()):
        return None
    offset = draw(st.integers(-10 * 86400 * 10**6, 3 * 365 * 86400 * 10**6))  # microseconds before AS_OF
    t = AS_OF - timedelta(microseconds=offset)
    zone = draw(st.sampled_from(ZONES))
    return t.replace(tzinfo=None) if zone is None else t.astimezone(zone)


# Zero recency/decay weights often (the query presets have both): FactorScorer.score skips a
# zero-weighted factor, which must give the same float as computing it.
maybe_zero = st.one_of(st.just(0.0), st.floats(0, 5))
weights = st.builds(
    ScoringWeights,
    importance=st.floats(0.01, 5),
    confidence=st.floats(0, 5),
    recency=maybe_zero,
    decay=maybe_zero,
    relevance=st.floats(0, 5),
)


@settings(max_examples=400, deadline=None)
@given(
    w=weights,
    has_query=st.booleans(),
    h_rec=st.floats(1, 1e9),
    h_dec=st.floats(1, 1e9),
    growth=st.floats(1, 4),
    importance=unit_or_wild,
    confidence=unit_or_wild,
    happened=times(),
    recalled=times(),
    created=times(),
    recalls=st.integers(-3, 200),
    relevance=unit_or_wild,
)
def test_skipping_unweighted_factors_keeps_the_score(
    w: ScoringWeights,
    has_query: bool,
    h_rec: float,
    h_dec: float,
    growth: float,
    importance: float | None,
    confidence: float | None,
    happened: datetime | None,
    recalled: datetime | None,
    created: datetime | None,
    recalls: int,
    relevance: float | None,
) -> None:
    fast = FactorScorer(
        as_of=AS_OF,
        weights=w,
        recency_half_life_seconds=h_rec,
        decay_half_life_seconds=h_dec,
        decay_growth=growth,
        has_query=has_query,
    )
    expected = score_candidate(
        as_of=AS_OF,
        weights=w,
        recency_half_life_seconds=h_rec,
        decay_half_life_seconds=h_dec,
        decay_growth=growth,
        importance=importance,
        confidence=confidence,
        happened_at=happened,
        last_recalled_at=recalled,
        created_at=created,
        recall_count=recalls,
        relevance=relevance,
        has_query=has_query,
    )
    args = (importance, confidence, happened, recalled, created, recalls, relevance)
    assert fast.score(args).hex() == fast.combine(fast.factors(args)).hex() == expected.score.hex()
    assert fast.scored(args) == expected  # the breakdown too
    # Twice: the memoised half-life per recall count must not change anything.
    assert fast.score(args) == expected.score


@pytest.mark.parametrize(
    ("h_rec", "h_dec", "growth"), [(0.0, 3600.0, 2.0), (3600.0, 0.0, 2.0), (3600.0, 3600.0, 0.5), (-1.0, 1.0, 1.0)]
)
def test_rejects_bad_half_lives(h_rec: float, h_dec: float, growth: float) -> None:
    with pytest.raises(InvalidScoringError):
        FactorScorer(
            as_of=AS_OF,
            weights=ScoringWeights(),
            recency_half_life_seconds=h_rec,
            decay_half_life_seconds=h_dec,
            decay_growth=growth,
            has_query=False,
        )
