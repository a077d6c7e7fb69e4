"""Unit tables for the scoring factors, weights and relevance fusion."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta, timezone

import pytest

from elephantasm.domain.errors import ValidationError
from elephantasm.domain.presets import PackConfig, adapt_weights, compile_weights, get_preset
from elephantasm.domain.scoring import (
    DEFAULT_CONFIDENCE,
    DEFAULT_DECAY,
    DEFAULT_IMPORTANCE,
    DEFAULT_RECENCY,
    ScoringWeights,
    contextual_relevance,
    decay,
    fuse_relevance,
    quantise,
    recency,
    score_candidate,
)

H = 3600.0
AS_OF = datetime(2025, 3, 10, 12, 0, tzinfo=UTC)


def effective_weights(config: PackConfig, query: str | None) -> ScoringWeights:
    """The normalised weights a compile uses for ``query`` under ``config``."""
    return compile_weights(config, query).normalised(has_query=bool(query))


@pytest.mark.parametrize(
    ("age", "half_life", "expected"),
    [(0, H, 1.0), (H, H, 0.5), (2 * H, H, 0.25), (3 * H, H, 0.125), (-5 * H, H, 1.0), (24 * H, 24 * H, 0.5)],
)
def test_recency_half_lives(age: float, half_life: float, expected: float) -> None:
    assert recency(age, half_life) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("t", "count", "base", "growth", "expected"),
    [
        (0, 0, H, 2.0, 0.0),
        (H, 0, H, 2.0, 0.5),
        (2 * H, 0, H, 2.0, 0.75),
        (2 * H, 1, H, 2.0, 0.5),  # one recall doubles the half-life
        (4 * H, 2, H, 2.0, 0.5),
        (H, 5, H, 1.0, 0.5),  # growth 1: recalls do not help
    ],
)
def test_decay_table(t: float, count: int, base: float, growth: float, expected: float) -> None:
    assert decay(t, count, base, growth) == pytest.approx(expected)


def test_decay_strengthens_with_recall_count() -> None:
    values = [decay(10 * H, n, H, 2.0) for n in range(8)]
    assert values == sorted(values, reverse=True)
    assert values[0] > 0.99 and values[-1] < 0.06
    assert 0.0 <= decay(1e12, 10**9, H, 3.0) <= 1.0  # no overflow on absurd counts


@pytest.mark.parametrize("bad", [0.0, -1.0])
def test_half_life_must_be_positive(bad: float) -> None:
    with pytest.raises(ValidationError):
        recency(1.0, bad)
    with pytest.raises(ValidationError):
        decay(1.0, 0, bad, 2.0)


def test_weights_normalise_and_drop_relevance_without_query() -> None:
    w = ScoringWeights(importance=2, confidence=1, recency=1, decay=0, relevance=4)
    with_q = w.normalised(has_query=True)
    without = w.normalised(has_query=False)
    assert sum(with_q.as_dict().values()) == pytest.approx(1.0)
    assert sum(without.as_dict().values()) == pytest.approx(1.0)
    assert with_q.relevance == pytest.approx(0.5)
    assert without.relevance == 0.0 and without.importance == pytest.approx(0.5)
    # Scale invariance: only ratios matter.
    w10 = ScoringWeights(importance=20, confidence=10, recency=10, decay=0, relevance=40)
    assert w10.normalised(True).as_dict() == pytest.approx(with_q.as_dict())


@pytest.mark.parametrize(
    "kwargs",
    [
        {"importance": -0.1},
        {"importance": float("nan")},
        {"importance": 0, "confidence": 0, "recency": 0, "decay": 0, "relevance": 1},
    ],
)
def test_invalid_weights(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValidationError):
        ScoringWeights(**kwargs)


def _score(**kw):  # type: ignore[no-untyped-def]
    base = {
        "as_of": AS_OF,
        "weights": ScoringWeights(),
        "recency_half_life_seconds": 24 * H,
        "decay_half_life_seconds": 24 * H,
        "decay_growth": 2.0,
    }
    return score_candidate(**{**base, **kw})


def test_missing_values_take_documented_defaults() -> None:
    s = _score()
    b = s.breakdown
    assert (b.importance, b.confidence, b.recency, b.decay, b.relevance) == (
        DEFAULT_IMPORTANCE,
        DEFAULT_CONFIDENCE,
        DEFAULT_RECENCY,
        DEFAULT_DECAY,
        None,
    )
    # All-neutral factors give a neutral score.
    assert s.score == pytest.approx(0.5)
    # With a query, missing relevance counts as zero rather than neutral.
    q = _score(has_query=True)
    assert q.breakdown.relevance == 0.0 and q.score < s.score


def test_score_is_weighted_sum_with_inverted_decay() -> None:
    w = ScoringWeights(importance=1, confidence=1, recency=1, decay=1, relevance=0)
    s = _score(
        weights=w,
        importance=1.0,
        confidence=0.0,
        happened_at=AS_OF - timedelta(hours=24),  # recency 0.5
        last_recalled_at=AS_OF - timedelta(hours=24),  # decay 0.5
    )
    assert s.breakdown.recency == pytest.approx(0.5)
    assert s.breakdown.decay == pytest.approx(0.5)
    assert s.score == pytest.approx((1.0 + 0.0 + 0.5 + 0.5) / 4)


def test_relevance_counts_only_with_query() -> None:
    w = ScoringWeights(importance=1, confidence=0, recency=0, decay=0, relevance=1)
    assert _score(weights=w, importance=0.0, relevance=1.0).score == 0.0
    assert _score(weights=w, importance=0.0, relevance=1.0, has_query=True).score == pytest.approx(0.5)


def test_decay_runs_from_creation_when_never_recalled() -> None:
    created = _score(created_at=AS_OF - timedelta(hours=24))
    recalled = _score(created_at=AS_OF - timedelta(days=30), last_recalled_at=AS_OF)
    assert created.breakdown.decay == pytest.approx(0.5)
    assert recalled.breakdown.decay == 0.0


def test_future_times_and_out_of_range_inputs_clamp() -> None:
    s = _score(importance=7.0, confidence=-2.0, happened_at=AS_OF + timedelta(days=1))
    assert s.breakdown.importance == 1.0 and s.breakdown.confidence == 0.0 and s.breakdown.recency == 1.0
    assert 0.0 <= s.score <= 1.0


@pytest.mark.parametrize(
    ("cosine", "rank", "expected"),
    [
        (None, None, None),
        (1.0, None, 1.0),
        (-0.4, None, 0.0),
        (None, 0.1, 0.5),
        (0.8, 0.1, 0.7 * 0.8 + 0.3 * 0.5),
        (1.0, 1e9, 1.0),
    ],
)
def test_fuse_relevance(cosine: float | None, rank: float | None, expected: float | None) -> None:
    got = fuse_relevance(cosine, rank)
    assert got == (None if expected is None else pytest.approx(expected))


def test_quantise_floors_to_bucket_in_utc() -> None:
    t = datetime(2025, 3, 10, 12, 59, 59, 999999, tzinfo=UTC)
    assert quantise(t, 3600) == datetime(2025, 3, 10, 12, 0, tzinfo=UTC)
    assert quantise(datetime(2025, 3, 10, 13, 0, tzinfo=UTC), 3600) == datetime(2025, 3, 10, 13, 0, tzinfo=UTC)
    cet = timezone(timedelta(hours=1))
    assert quantise(datetime(2025, 3, 10, 13, 30, tzinfo=cet), 3600) == datetime(2025, 3, 10, 12, 0, tzinfo=UTC)
    assert quantise(datetime(2025, 3, 10, 12, 30), 3600) == datetime(2025, 3, 10, 12, 0, tzinfo=UTC)  # naive = UTC
    with pytest.raises(ValidationError):
        quantise(t, 0)


def test_self_determined_rules_are_deterministic_and_directional() -> None:
    cfg = get_preset("self_determined")
    base = effective_weights(cfg, "tell me about coffee")
    temporal = effective_weights(cfg, "what did we discuss yesterday")
    important = effective_weights(cfg, "what does the user always prefer")
    assert temporal.recency > base.recency
    assert important.importance > base.importance
    assert effective_weights(cfg, "what did we discuss yesterday") == temporal
    assert adapt_weights(cfg.weights, None) == cfg.weights
    # Non-adaptive presets only tell whether the query is about time: if not, recency steps aside.
    conv = get_preset("conversational")
    assert effective_weights(conv, "yesterday") == effective_weights(conv, "what happened last week")
    assert effective_weights(conv, "coffee").recency == 0.0 < effective_weights(conv, "yesterday").recency


def test_contextual_relevance_counts_a_nan_signal_as_missing() -> None:
    # A zero vector's cosine is NaN in pgvector: it must not poison the whole set's spread.
    with_nan = contextual_relevance([(math.nan, 0.2), (0.5, 0.0), (0.3, 0.1)])
    assert with_nan == contextual_relevance([(None, 0.2), (0.5, 0.0), (0.3, 0.1)]) == [1.0, 0.85, 0.075]
