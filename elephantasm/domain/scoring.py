"""Candidate scoring: importance, confidence, recency, decay and (with a query) relevance.

Every factor lies in [0, 1]; the score is ``Σ wᵢ·factorᵢ`` with decay entering as ``1 − decay``
and weights normalised to sum to 1 (the relevance weight only counts when a query is given).
This module is the one place the score and its rounding are computed: a compile, the inspector's
factors and every other reader go through :class:`FactorScorer` (SQL only bounds a top-k with the
same formula, as a prefilter). Pure: ``as_of`` and all times are arguments; nothing reads a clock.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache

import numpy as np

from elephantasm.domain.errors import ValidationError

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
    return _forgotten(t_since_recall_seconds, base_half_life * growth ** min(max(0, recall_count), 64))


def _forgotten(age_seconds: float, half_life_seconds: float) -> float:
    return _clamp01(1.0 - 2.0 ** (-max(0.0, age_seconds) / half_life_seconds))


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

    ``signals`` are ``(cosine, lexical)`` pairs. Each signal is min–max normalised over the
    candidates that have it (cosines bunch in a narrow band, so their raw values barely
    discriminate; positions within the set do), then averaged with weight ``cosine_weight`` on the
    cosine. The best candidate maps to 1; a spread narrower than ``MIN_*_SPREAD`` is measured
    against that minimum, so near-equal values stay near 1 rather than being stretched over the
    whole range. A signal whose values are all equal carries no information and is left out; if
    neither discriminates, the plain :func:`fuse_relevance` is used. A NaN counts as missing.
    Computed as arrays (a compile has several hundred candidates). Pure and order-independent.
    """
    n = len(signals)
    cos = np.fromiter((math.nan if c is None else c for c, _ in signals), np.float64, n)
    lex = np.fromiter((math.nan if f is None else f for _, f in signals), np.float64, n)
    has_cos, has_lex = ~np.isnan(cos), ~np.isnan(lex)
    a = _spread(_round(np.clip(cos, 0.0, 1.0)), has_cos, MIN_COSINE_SPREAD)
    b = _spread(_round(np.maximum(lex, 0.0)), has_lex, MIN_FTS_SPREAD)
    use_a = has_cos if a is not None else np.zeros(n, dtype=bool)
    use_b = has_lex if b is not None else np.zeros(n, dtype=bool)
    a = np.zeros(n) if a is None else a
    b = np.zeros(n) if b is None else b
    w_cos, w_lex = cosine_weight, 1.0 - cosine_weight
    with np.errstate(invalid="ignore", divide="ignore"):  # the branch not taken may divide by a zero weight
        x = np.where(
            use_a & use_b,
            (w_cos * a + w_lex * b) / (w_cos + w_lex),
            np.where(use_a, w_cos * a / w_cos, w_lex * b / w_lex),
        )
    out: list[float | None] = _round(np.clip(x, 0.0, 1.0)).tolist()
    for i in np.flatnonzero(~(use_a | use_b)).tolist():
        out[i] = fuse_relevance(*signals[i])
    return out


def _round(x: np.ndarray) -> np.ndarray:
    """To :data:`SCORE_DIGITS` decimals (``rint`` of the scaled value: the same on every IEEE machine)."""
    scale = 10.0**SCORE_DIGITS
    return np.rint(x * scale) / scale


def _spread(values: np.ndarray, present: np.ndarray, min_width: float) -> np.ndarray | None:
    """``values`` min–max normalised over those ``present``, the width at least ``min_width``; None
    when nothing is present or all present values are equal."""
    if not present.any():
        return None
    hi, lo = float(values[present].max()), float(values[present].min())
    if hi - lo <= 1e-9:
        return None
    return 1.0 - (hi - values) / max(hi - lo, min_width)


def quantise(as_of: datetime, bucket_seconds: int) -> datetime:
    """Floor ``as_of`` (UTC) to a multiple of ``bucket_seconds`` since the epoch."""
    if bucket_seconds <= 0:
        raise InvalidScoringError("bucket_seconds must be > 0")
    t = _as_utc(as_of)
    micros = (t - _EPOCH) // timedelta(microseconds=1)
    bucket = bucket_seconds * 1_000_000
    return _EPOCH + timedelta(microseconds=micros - micros % bucket)


FactorInputs = tuple[float | None, float | None, datetime | None, datetime | None, datetime | None, int, float | None]
"""One candidate's inputs, in this order: importance, confidence, happened_at, last_recalled_at,
created_at, recall_count, relevance (see :func:`score_candidate`)."""

Factors = tuple[float, float, float, float, float | None]
"""Unrounded ``(importance, confidence, recency, decay, relevance)``; relevance None without a query."""


class FactorScorer:
    """Scores candidates at one ``as_of`` with one weighting and one set of half-lives.

    A compile scores a few hundred candidates with the same shared inputs, so they are checked
    and normalised once here; :func:`score_candidate` is this class for a single candidate.
    """

    __slots__ = ("_as_of", "_dec_h", "_growth", "_half_lives", "_has_query", "_rec_h", "_w")

    def __init__(
        self,
        *,
        as_of: datetime,
        weights: ScoringWeights,
        recency_half_life_seconds: float,
        decay_half_life_seconds: float,
        decay_growth: float,
        has_query: bool,
    ) -> None:
        if recency_half_life_seconds <= 0:
            raise InvalidScoringError("recency half-life must be > 0")
        if decay_half_life_seconds <= 0 or decay_growth < 1:
            raise InvalidScoringError("decay needs base_half_life > 0 and growth >= 1")
        w = weights.normalised(has_query)
        self._w = (w.importance, w.confidence, w.recency, w.decay, w.relevance)
        self._as_of = _as_utc(as_of)
        self._rec_h = recency_half_life_seconds
        self._dec_h = decay_half_life_seconds
        self._growth = decay_growth
        self._has_query = has_query
        self._half_lives: dict[int, float] = {}  # decay half-life per recall count, memoised

    def _decay_half_life(self, recall_count: int) -> float:
        h = self._half_lives.get(recall_count)
        if h is None:
            # The exponent is capped so huge recall counts cannot overflow.
            h = self._half_lives[recall_count] = self._dec_h * self._growth ** min(max(0, recall_count), 64)
        return h

    def factors(self, inputs: FactorInputs, *, weighted_only: bool = False) -> Factors:
        """The unrounded factors. ``weighted_only``: recency and decay are not computed when their
        weight is 0 (the query presets'): their term is 0.0 whatever the factor, so the score is
        the same float, and their powers were most of the cost of scoring a candidate."""
        importance, confidence, happened_at, last_recalled_at, created_at, recall_count, relevance = inputs
        _, _, w_rec, w_dec, _ = self._w
        f_imp = DEFAULT_IMPORTANCE if importance is None else _clamp01(importance)
        f_conf = DEFAULT_CONFIDENCE if confidence is None else _clamp01(confidence)
        f_rec = DEFAULT_RECENCY
        if happened_at is not None and not (weighted_only and w_rec == 0.0):
            f_rec = recency(seconds_between(happened_at, self._as_of), self._rec_h)
        touched = last_recalled_at if last_recalled_at is not None else created_at
        f_dec = DEFAULT_DECAY
        if touched is not None and not (weighted_only and w_dec == 0.0):
            f_dec = _forgotten(seconds_between(touched, self._as_of), self._decay_half_life(recall_count))
        f_rel = (_clamp01(relevance) if relevance is not None else 0.0) if self._has_query else None
        return f_imp, f_conf, f_rec, f_dec, f_rel

    def combine(self, factors: Factors) -> float:
        """The rounded score of :meth:`factors`' result: ``Σ wᵢ·factorᵢ``, decay as ``1 − decay``."""
        f_imp, f_conf, f_rec, f_dec, f_rel = factors
        w_imp, w_conf, w_rec, w_dec, w_rel = self._w
        total = w_imp * f_imp + w_conf * f_conf + w_rec * f_rec + w_dec * (1.0 - f_dec) + w_rel * (f_rel or 0.0)
        return round(_clamp01(total), SCORE_DIGITS)

    def score(self, inputs: FactorInputs) -> float:
        """The rounded score of one candidate."""
        return self.combine(self.factors(inputs, weighted_only=True))

    @staticmethod
    def breakdown(factors: Factors) -> ScoreBreakdown:
        """The rounded breakdown of :meth:`factors`' result."""
        r = SCORE_DIGITS
        return ScoreBreakdown(
            importance=round(factors[0], r),
            confidence=round(factors[1], r),
            recency=round(factors[2], r),
            decay=round(factors[3], r),
            relevance=None if factors[4] is None else round(factors[4], r),
        )

    def scored(self, inputs: FactorInputs) -> ScoredCandidate:
        """The score and its rounded breakdown."""
        f = self.factors(inputs)
        return ScoredCandidate(score=self.combine(f), breakdown=self.breakdown(f))


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
    scorer = FactorScorer(
        as_of=as_of,
        weights=weights,
        recency_half_life_seconds=recency_half_life_seconds,
        decay_half_life_seconds=decay_half_life_seconds,
        decay_growth=decay_growth,
        has_query=has_query,
    )
    return scorer.scored((importance, confidence, happened_at, last_recalled_at, created_at, recall_count, relevance))
