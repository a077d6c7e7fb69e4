"""FactorScorer gives exactly (bit for bit) the score score_candidate gives: packs must not change."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from elephantasm.domain.fast_scoring import FactorScorer
from elephantasm.domain.scoring import InvalidScoringError, ScoringWeights, score_candidate

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
# zero-weighted factor, which must give the same float.
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
def test_same_score_as_score_candidate(
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
    assert fast.score(args) == expected.score
    assert fast.combine(fast.factors(args)) == expected.score
    assert fast.scored(args) == expected  # the breakdown too
    # Twice: the memoised half-life per recall count must not change anything.
    assert fast.score(args) == expected.score


@pytest.mark.parametrize(
    ("h_rec", "h_dec", "growth"), [(0.0, 3600.0, 2.0), (3600.0, 0.0, 2.0), (3600.0, 3600.0, 0.5), (-1.0, 1.0, 1.0)]
)
def test_rejects_what_score_candidate_rejects(h_rec: float, h_dec: float, growth: float) -> None:
    with pytest.raises(InvalidScoringError):
        FactorScorer(
            as_of=AS_OF,
            weights=ScoringWeights(),
            recency_half_life_seconds=h_rec,
            decay_half_life_seconds=h_dec,
            decay_growth=growth,
            has_query=False,
        )


_factor = st.one_of(st.floats(0, 1), st.sampled_from([0.0, 1.0, 0.5, 0.1234565, 0.0000005, 0.9999995]))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_factor, _factor, _factor, _factor, st.one_of(st.none(), _factor)), max_size=60))
def test_breakdowns_of_many_are_each_breakdown(factors: list[tuple[float, float, float, float, float | None]]) -> None:
    # The served items' breakdowns are rounded in one array pass: the same floats, bit for bit.
    many = FactorScorer.breakdowns(factors)
    each = [FactorScorer.breakdown(f) for f in factors]
    as_bits = [
        [None if v is None else v.hex() for v in (b.importance, b.confidence, b.recency, b.decay, b.relevance)]
        for b in many
    ]
    assert as_bits == [
        [None if v is None else v.hex() for v in (b.importance, b.confidence, b.recency, b.decay, b.relevance)]
        for b in each
    ]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(unit_or_wild, unit_or_wild, times(), times(), times(), st.integers(0, 80), unit_or_wild), max_size=40
    ),
    st.booleans(),
    st.sampled_from(["conversational", "recent"]),
)
def test_scores_of_many_are_each_score(inputs: list, has_query: bool, weighting: str) -> None:
    # A compile scores its candidates in one call: every score as score() gives it, bit for bit.
    weights = ScoringWeights(
        importance=0.3, confidence=0.2, recency=0.0 if weighting == "conversational" else 0.3, decay=0.1, relevance=0.4
    )
    fast = FactorScorer(
        as_of=AS_OF,
        weights=weights,
        recency_half_life_seconds=86400.0 * 7,
        decay_half_life_seconds=86400.0 * 30,
        decay_growth=1.5,
        has_query=has_query,
    )
    assert [s.hex() for s in fast.scores(inputs)] == [fast.score(i).hex() for i in inputs]
