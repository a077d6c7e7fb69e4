"""Candidate scoring: importance, confidence, recency, decay and (with a query) relevance.

Every factor lies in [0, 1]; the score is ``Σ wᵢ·factorᵢ`` with decay entering as ``1 − decay``
and weights normalised to sum to 1 (the relevance weight only counts when a query is given).
Pure: ``as_of`` and all times are arguments; nothing reads a clock.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache

import numpy as np

from elephantasm.domain.errors import ValidationError
from elephantasm.domain.exact_round import round_many

# Documented defaults for missing values: neutral midpoints, so a memory without an importance
# or confidence is neither favoured nor buried, and one without timestamps counts as half-fresh.
DEFAULT_IMPORTANCE = 0.5
DEFAULT_CONFIDENCE = 0.5
DEFAULT_RECENCY = 0.5
DEFAULT_DECAY = 0.5

# Relevance fusion: cosine carries most of the signal; full-text rank rewards exact terms.
COSINE_WEIGHT = 0.7
# In-compile relevance (contextual_relevance): with a semantic embedder the cosine is the stronger
# signal. Measured on the quality benchmark, plain and paraphrased: 0.85 beat 0.5 and 0.7.
CONTEXT_COSINE_WEIGHT = 0.85
# Narrower spreads than these are not stretched to [0, 1]: near-equal candidates (a handful of
# memories all about the query) stay near-equal instead of one being pushed to 0.
MIN_COSINE_SPREAD = 0.1
MIN_FTS_SPREAD = 0.05
# ts_rank is unbounded above but typically 0.01–0.5; rank/(rank+k) maps it into [0, 1).
FTS_RANK_HALF_POINT = 0.1

# Scores are rounded so float noise (e.g. pgvector's float4 maths) cannot flip a tie.
SCORE_DIGITS = 6

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
FACTORS = ("importance", "confidence", "recency", "decay", "relevance")


class InvalidScoringError(ValidationError, ValueError):
    """Bad weights or half-lives. Also a ``ValueError`` so pydantic models embedding
    :class:`ScoringWeights` report it as an ordinary field error."""


@dataclass(frozen=True, slots=True)
class ScoringWeights:
    """Non-negative factor weights; only their ratios matter (see :meth:`normalised`)."""

    importance: float = 0.25
    confidence: float = 0.10
    recency: float = 0.25
    decay: float = 0.10
    relevance: float = 0.30

    def __post_init__(self) -> None:
        for name in FACTORS:
            value = getattr(self, name)
            if not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
                raise InvalidScoringError(f"weight {name!r} must be a finite number >= 0, got {value!r}")
        if sum(getattr(self, n) for n in FACTORS[:4]) <= 0:
            raise InvalidScoringError("at least one of importance/confidence/recency/decay weights must be > 0")

    def normalised(self, has_query: bool) -> ScoringWeights:
        """Weights summing to 1; relevance is zeroed first when there is no query."""
        return _normalised(self, has_query)

    def as_dict(self) -> dict[str, float]:
        """Plain dict in factor order."""
        return {name: getattr(self, name) for name in FACTORS}


@lru_cache(maxsize=256)
def _normalised(weights: ScoringWeights, has_query: bool) -> ScoringWeights:
    # Memoised: score_candidate calls this once per candidate on the hot inject path.
    raw = weights.as_dict()
    if not has_query:
        raw["relevance"] = 0.0
    total = sum(raw.values())
    return ScoringWeights(**{k: v / total for k, v in raw.items()})


@dataclass(frozen=True, slots=True)
class ScoreBreakdown:
    """Each factor's value in [0, 1]; ``relevance`` is None without a query."""

    importance: float
    confidence: float
    recency: float
    decay: float
    relevance: float | None

    def as_dict(self) -> dict[str, float | None]:
        """Wire form ``{importance, confidence, recency, decay, relevance}``."""
        return {name: getattr(self, name) for name in FACTORS}


@dataclass(frozen=True, slots=True)
class ScoredCandidate:
    """A score in [0, 1] and the factors it came from."""

    score: float
    breakdown: ScoreBreakdown


def _clamp01(x: float) -> float:
    return 0.0 if x <= 0.0 else 1.0 if x >= 1.0 else float(x)


def _as_utc(t: datetime) -> datetime:
    # Naive datetimes are read as UTC so results never depend on the machine's time zone.
    return t.replace(tzinfo=UTC) if t.tzinfo is None else t.astimezone(UTC)


def seconds_between(earlier: datetime, later: datetime) -> float:
    """``later − earlier`` in seconds, clamped at 0 (clock skew must not create the future)."""
    # Aware datetimes subtract correctly across zones; only naive ones need a zone (UTC).
    if earlier.tzinfo is None:
        earlier = earlier.replace(tzinfo=UTC)
    if later.tzinfo is None:
        later = later.replace(tzinfo=UTC)
    return max(0.0, (later - earlier).total_seconds())


def recency(age_seconds: float, half_life_seconds: float) -> float:
    """``2^(−age/h)``: 1 for a brand-new experience, 0.5 after one half-life."""
    if half_life_seconds <= 0:
        raise InvalidScoringError("recency half-life must be > 0")
    return _clamp01(2.0 ** (-max(0.0, age_seconds) / half_life_seconds))


def decay(t_since_recall_seconds: float, recall_count: int, base_half_life: float, growth: float) -> float:
    """Forgetting ``1 − 2^(−t/h)`` with ``h = base·growth^recall_count`` (spaced repetition).

    Each recall multiplies the half-life by ``growth`` (>= 1), so often-recalled memories fade
    more slowly. The exponent is capped so huge recall counts cannot overflow.
    """
    if base_half_life <= 0 or growth < 1:
        raise InvalidScoringError("decay needs base_half_life > 0 and growth >= 1")
    h = base_half_life * growth ** min(max(0, recall_count), 64)
    return _clamp01(1.0 - 2.0 ** (-max(0.0, t_since_recall_seconds) / h))


def fuse_relevance(cosine: float | None, fts_rank: float | None) -> float | None:
    """Hybrid relevance in [0, 1] from a cosine similarity and a Postgres ``ts_rank``.

    Negative cosine counts as 0. If only one signal is present it is used alone; neither → None.
    """
    parts: list[tuple[float, float]] = []
    if cosine is not None:
        parts.append((COSINE_WEIGHT, _clamp01(cosine)))
    if fts_rank is not None:
        r = max(0.0, fts_rank)
        parts.append((1.0 - COSINE_WEIGHT, r / (r + FTS_RANK_HALF_POINT)))
    if not parts:
        return None
    return _clamp01(sum(w * v for w, v in parts) / sum(w for w, _ in parts))


def contextual_relevance(
    signals: Sequence[tuple[float | None, float | None]], cosine_weight: float = CONTEXT_COSINE_WEIGHT
) -> list[float | None]:
    """Relevance of each candidate of one compile, spread over [0, 1] within the candidate set.

    ``signals`` are ``(cosine, fts_rank)`` pairs. Each signal is min–max normalised over the
    candidates that have it (cosines bunch in a narrow band, so their raw values barely
    discriminate; positions within the set do), then averaged with weight
    :data:`CONTEXT_COSINE_WEIGHT` on the cosine: with a semantic embedder it is the stronger signal,
    and full text still lifts exact terms (measured against equal weights and reciprocal rank
    fusion in ``benchmarks/RESULTS.md``). The best candidate maps to 1; a spread narrower than
    ``MIN_*_SPREAD`` is measured against that minimum, so near-equal values stay near 1 rather than
    being stretched over the whole range. A signal whose values are all equal
    carries no information and is left out; if neither discriminates, the plain
    :func:`fuse_relevance` is used. Pure and order-independent: same set → same values.

    A compile's few hundred candidates are computed as arrays (:func:`_relevance_arrays`), with
    the same floats as the per-candidate definition (:func:`_relevance_each`). ``cosine_weight``:
    the cosine's share of the mean (the lexical signal has the rest).
    """
    if len(signals) >= _ARRAYS_FROM:
        out = _relevance_arrays(signals, cosine_weight)
        if out is not None:
            return out
    return _relevance_each(signals, cosine_weight)


# Below this many candidates the per-candidate loop costs less than building the arrays.
_ARRAYS_FROM = 24


def _relevance_each(
    signals: Sequence[tuple[float | None, float | None]], cosine_weight: float = CONTEXT_COSINE_WEIGHT
) -> list[float | None]:
    """:func:`contextual_relevance` by its definition, one candidate at a time."""
    # _clamp01(c) and max(0.0, f) written out (a compile calls this for ~800 candidates): the same
    # values, NaN and -0.0 included.
    r = SCORE_DIGITS
    cos = [None if c is None else round(0.0 if c <= 0.0 else 1.0 if c >= 1.0 else float(c), r) for c, _ in signals]
    fts = [None if f is None else round(f if f > 0.0 else 0.0, r) for _, f in signals]

    n_cos, n_fts = _spread(cos, MIN_COSINE_SPREAD), _spread(fts, MIN_FTS_SPREAD)
    none = [None] * len(signals)
    return [
        _weighted_pair(a, b, cosine_weight) if a is not None or b is not None else fuse_relevance(c, f)
        for (c, f), a, b in zip(signals, n_cos or none, n_fts or none, strict=True)
    ]


def _spread(values: list[float | None], min_width: float) -> list[float | None] | None:
    """Min–max normalised ``values`` (None kept), the width at least ``min_width``; None when
    nothing is present or all present values are equal."""
    present = [v for v in values if v is not None]
    if not present or max(present) - min(present) <= 1e-9:
        return None
    hi = max(present)
    width = max(hi - min(present), min_width)
    return [None if v is None else 1.0 - (hi - v) / width for v in values]


def _weighted_pair(a: float | None, b: float | None, cosine_weight: float = CONTEXT_COSINE_WEIGHT) -> float:
    """The weighted mean of the normalised signals present (at least one), rounded: the same
    floating-point operations as ``sum(w * v) / sum(w)`` over them (a sum starts from 0, and
    ``0 + x`` is ``x``), written out because a compile evaluates it for every candidate."""
    w_cos, w_fts = cosine_weight, 1.0 - cosine_weight
    if a is not None and b is not None:
        x = (w_cos * a + w_fts * b) / (w_cos + w_fts)
    elif a is not None:
        x = w_cos * a / w_cos
    else:
        assert b is not None
        x = w_fts * b / w_fts
    return round(_clamp01(x), SCORE_DIGITS)


def _relevance_arrays(
    signals: Sequence[tuple[float | None, float | None]], cosine_weight: float = CONTEXT_COSINE_WEIGHT
) -> list[float | None] | None:
    """:func:`_relevance_each` as numpy array operations in the same order (IEEE arithmetic
    elementwise; ``round`` by :func:`~elephantasm.domain.exact_round.round_many`): the same floats.
    None when a signal is not finite (NaN orders differently in Python's max): the caller then
    takes the per-candidate path."""
    n = len(signals)
    has_cos = np.fromiter((c is not None for c, _ in signals), dtype=bool, count=n)
    has_fts = np.fromiter((f is not None for _, f in signals), dtype=bool, count=n)
    cos = np.fromiter((0.0 if c is None else c for c, _ in signals), dtype=np.float64, count=n)
    fts = np.fromiter((0.0 if f is None else f for _, f in signals), dtype=np.float64, count=n)
    if not (np.isfinite(cos).all() and np.isfinite(fts).all()):
        return None
    cos = round_many(_clamp01_array(cos), SCORE_DIGITS)
    fts = round_many(np.where(fts > 0.0, fts, 0.0), SCORE_DIGITS)
    a, has_a = _spread_array(cos, has_cos, MIN_COSINE_SPREAD)
    b, has_b = _spread_array(fts, has_fts, MIN_FTS_SPREAD)
    w_cos, w_fts = cosine_weight, 1.0 - cosine_weight
    x = np.where(
        has_a & has_b, (w_cos * a + w_fts * b) / (w_cos + w_fts), np.where(has_a, w_cos * a / w_cos, w_fts * b / w_fts)
    )
    out: list[float | None] = round_many(_clamp01_array(x), SCORE_DIGITS).tolist()
    for i in np.flatnonzero(~(has_a | has_b)).tolist():
        c, f = signals[i]
        out[i] = fuse_relevance(c, f)
    return out


def _clamp01_array(x: np.ndarray) -> np.ndarray:
    """:func:`_clamp01` of each (-0.0 becomes 0.0 as there; the arrays here hold no NaN)."""
    return np.where(x <= 0.0, 0.0, np.where(x >= 1.0, 1.0, x))


def _spread_array(values: np.ndarray, present: np.ndarray, min_width: float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_spread` over ``values[present]``: the normalised values and where they count (nowhere
    when nothing is present or all present values are equal)."""
    if not present.any():
        return values, present
    hi, lo = float(values[present].max()), float(values[present].min())
    if hi - lo <= 1e-9:
        return values, np.zeros_like(present)
    width = max(hi - lo, min_width)
    return 1.0 - (hi - values) / width, present


def quantise(as_of: datetime, bucket_seconds: int) -> datetime:
    """Floor ``as_of`` (UTC) to a multiple of ``bucket_seconds`` since the epoch."""
    if bucket_seconds <= 0:
        raise InvalidScoringError("bucket_seconds must be > 0")
    t = _as_utc(as_of)
    micros = (t - _EPOCH) // timedelta(microseconds=1)
    bucket = bucket_seconds * 1_000_000
    return _EPOCH + timedelta(microseconds=micros - micros % bucket)


def score_candidate(
    *,
    as_of: datetime,
    weights: ScoringWeights,
    recency_half_life_seconds: float,
    decay_half_life_seconds: float,
    decay_growth: float,
    importance: float | None = None,
    confidence: float | None = None,
    happened_at: datetime | None = None,
    last_recalled_at: datetime | None = None,
    created_at: datetime | None = None,
    recall_count: int = 0,
    relevance: float | None = None,
    has_query: bool = False,
) -> ScoredCandidate:
    """Score one candidate at ``as_of`` (pass the quantised bucket for byte-stable packs).

    ``happened_at`` is when the experience happened (``time_end``), not when the row was written.
    Decay runs from ``last_recalled_at``, else ``created_at``. Missing values take the
    ``DEFAULT_*`` constants. With ``has_query`` a missing relevance counts as 0.
    """
    w = weights.normalised(has_query)
    f_imp = DEFAULT_IMPORTANCE if importance is None else _clamp01(importance)
    f_conf = DEFAULT_CONFIDENCE if confidence is None else _clamp01(confidence)
    f_rec = (
        DEFAULT_RECENCY
        if happened_at is None
        else recency(seconds_between(happened_at, as_of), recency_half_life_seconds)
    )
    touched = last_recalled_at if last_recalled_at is not None else created_at
    f_dec = (
        DEFAULT_DECAY
        if touched is None
        else decay(seconds_between(touched, as_of), recall_count, decay_half_life_seconds, decay_growth)
    )
    f_rel = (_clamp01(relevance) if relevance is not None else 0.0) if has_query else None
    total = (
        w.importance * f_imp
        + w.confidence * f_conf
        + w.recency * f_rec
        + w.decay * (1.0 - f_dec)
        + w.relevance * (f_rel or 0.0)
    )
    r = SCORE_DIGITS
    breakdown = ScoreBreakdown(
        importance=round(f_imp, r),
        confidence=round(f_conf, r),
        recency=round(f_rec, r),
        decay=round(f_dec, r),
        relevance=None if f_rel is None else round(f_rel, r),
    )
    return ScoredCandidate(score=round(_clamp01(total), r), breakdown=breakdown)
