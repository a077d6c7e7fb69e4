"""The five-factor score of many candidates of one compile, without per-candidate set-up.

:func:`~elephantasm.domain.scoring.score_candidate` re-derives everything per call: normalised
weights, half-life checks, time-zone handling, and two dataclasses for the breakdown. A compile
scores a few hundred candidates with the *same* ``as_of``, weights and half-lives, and the packer
only needs the score; the breakdown is read for the few items a pack serves. :class:`FactorScorer`
fixes the shared inputs once and computes the score with the same floating-point operations in the
same order, so its result is bit-for-bit the one ``score_candidate`` returns (a property test
checks it). Not numpy: its SIMD ``power``/``exp`` may differ from the C library's in the last bit
on some CPUs, and a rounded score that flips would change a pack's bytes between replicas. (Only the
rounding of many breakdowns at once is an array pass: multiplication, division and ``rint`` are
exactly rounded everywhere; :mod:`~elephantasm.domain.exact_round`.)
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import numpy as np

from elephantasm.domain.exact_round import round_many
from elephantasm.domain.scoring import (
    DEFAULT_CONFIDENCE,
    DEFAULT_DECAY,
    DEFAULT_IMPORTANCE,
    DEFAULT_RECENCY,
    SCORE_DIGITS,
    InvalidScoringError,
    ScoreBreakdown,
    ScoredCandidate,
    ScoringWeights,
)

FactorInputs = tuple[float | None, float | None, datetime | None, datetime | None, datetime | None, int, float | None]
"""``score_candidate``'s per-candidate arguments, in this order: importance, confidence, happened_at,
last_recalled_at, created_at, recall_count, relevance."""

Factors = tuple[float, float, float, float, float | None]
"""Unrounded ``(importance, confidence, recency, decay, relevance)``; relevance None without a query."""

# score_candidate caps the recall exponent at 64 (decay()).
_MAX_RECALL_EXPONENT = 64


def _clamp01(x: float) -> float:
    # Same as scoring._clamp01 (kept local: a module-level call is the hot path here).
    return 0.0 if x <= 0.0 else 1.0 if x >= 1.0 else float(x)


class FactorScorer:
    """Scores candidates at one ``as_of`` with one weighting: ``score_candidate(...).score``, faster."""

    __slots__ = ("_as_of", "_dec_h", "_growth", "_has_query", "_rec_h", "_w", "_half_lives")

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
        # The same validation score_candidate applies on each call, once.
        if recency_half_life_seconds <= 0:
            raise InvalidScoringError("recency half-life must be > 0")
        if decay_half_life_seconds <= 0 or decay_growth < 1:
            raise InvalidScoringError("decay needs base_half_life > 0 and growth >= 1")
        w = weights.normalised(has_query)
        self._w = (w.importance, w.confidence, w.recency, w.decay, w.relevance)
        # Naive times are read as UTC (as score_candidate does), once here rather than per call.
        self._as_of = as_of if as_of.tzinfo is not None else as_of.replace(tzinfo=UTC)
        self._rec_h = recency_half_life_seconds
        self._dec_h = decay_half_life_seconds
        self._growth = decay_growth
        self._has_query = has_query
        # Decay half-life per recall count: ``base * growth ** min(max(0, n), 64)``, memoised.
        self._half_lives: dict[int, float] = {}

    def _age(self, t: datetime) -> float:
        """``seconds_between(t, as_of)`` (naive times read as UTC)."""
        if t.tzinfo is None:
            t = t.replace(tzinfo=UTC)
        age = (self._as_of - t).total_seconds()
        return age if age > 0.0 else 0.0  # max(0.0, age), without the call

    def _decay_half_life(self, recall_count: int) -> float:
        h = self._half_lives.get(recall_count)
        if h is None:
            h = self._dec_h * self._growth ** min(max(0, recall_count), _MAX_RECALL_EXPONENT)
            self._half_lives[recall_count] = h
        return h

    def factors(self, inputs: FactorInputs) -> Factors:
        """The unrounded factors ``(importance, confidence, recency, decay, relevance)``."""
        importance, confidence, happened_at, last_recalled_at, created_at, recall_count, relevance = inputs
        f_imp = DEFAULT_IMPORTANCE if importance is None else _clamp01(importance)
        f_conf = DEFAULT_CONFIDENCE if confidence is None else _clamp01(confidence)
        f_rec = self._recency(happened_at)
        f_dec = self._decay(last_recalled_at if last_recalled_at is not None else created_at, recall_count)
        f_rel = (_clamp01(relevance) if relevance is not None else 0.0) if self._has_query else None
        return f_imp, f_conf, f_rec, f_dec, f_rel

    def _recency(self, happened_at: datetime | None) -> float:
        # _age is already >= 0, so score_candidate's max(0.0, age) is the age itself.
        return DEFAULT_RECENCY if happened_at is None else _clamp01(2.0 ** (-self._age(happened_at) / self._rec_h))

    def _decay(self, touched: datetime | None, recall_count: int) -> float:
        """The decay factor of a row last recalled (else created) at ``touched``."""
        if touched is None:
            return DEFAULT_DECAY
        return _clamp01(1.0 - 2.0 ** (-self._age(touched) / self._decay_half_life(recall_count)))

    def combine(self, factors: Factors) -> float:
        """The rounded score of :meth:`factors`' result."""
        f_imp, f_conf, f_rec, f_dec, f_rel = factors
        w_imp, w_conf, w_rec, w_dec, w_rel = self._w
        total = w_imp * f_imp + w_conf * f_conf + w_rec * f_rec + w_dec * (1.0 - f_dec) + w_rel * (f_rel or 0.0)
        return round(_clamp01(total), SCORE_DIGITS)

    def score(self, inputs: FactorInputs) -> float:
        """The rounded score ``score_candidate`` gives for these inputs (= ``combine(factors(inputs))``).

        A factor whose weight is 0 is not computed: its term is 0.0 either way (0.0 times a factor
        in [0, 1] is 0.0, and ``x + 0.0`` is ``x`` for the non-negative partial sums here), so the
        float is the same. Query presets weigh recency and decay 0, and their ages and powers were
        most of the cost of scoring a candidate; the breakdown (:meth:`factors`) still has them.
        """
        return round(self._unrounded(inputs), SCORE_DIGITS)

    def scores(self, inputs: Sequence[FactorInputs]) -> list[float]:
        """:meth:`score` of each, the same floats: each unrounded score is computed as there, and
        all are rounded in one array pass (:func:`~elephantasm.domain.exact_round.round_many`)."""
        score = self._unrounded
        return round_many(np.fromiter((score(i) for i in inputs), np.float64, len(inputs)), SCORE_DIGITS).tolist()

    def _unrounded(self, inputs: FactorInputs) -> float:
        """:meth:`score` before its final ``round``."""
        importance, confidence, happened_at, last_recalled_at, created_at, recall_count, relevance = inputs
        w_imp, w_conf, w_rec, w_dec, w_rel = self._w
        f_imp = DEFAULT_IMPORTANCE if importance is None else _clamp01(importance)
        f_conf = DEFAULT_CONFIDENCE if confidence is None else _clamp01(confidence)
        rec = w_rec * self._recency(happened_at) if w_rec != 0.0 else 0.0
        touched = last_recalled_at if last_recalled_at is not None else created_at
        dec = w_dec * (1.0 - self._decay(touched, recall_count)) if w_dec != 0.0 else 0.0
        f_rel = (_clamp01(relevance) if relevance is not None else 0.0) if self._has_query else None
        total = w_imp * f_imp + w_conf * f_conf + rec + dec + w_rel * (f_rel or 0.0)
        return _clamp01(total)

    @staticmethod
    def breakdown(factors: Factors) -> ScoreBreakdown:
        """The rounded breakdown of :meth:`factors`' result, as ``score_candidate`` gives it."""
        r = SCORE_DIGITS
        return ScoreBreakdown(
            importance=round(factors[0], r),
            confidence=round(factors[1], r),
            recency=round(factors[2], r),
            decay=round(factors[3], r),
            relevance=None if factors[4] is None else round(factors[4], r),
        )

    @staticmethod
    def breakdowns(factors: Sequence[Factors]) -> list[ScoreBreakdown]:
        """:meth:`breakdown` of each, the same floats: rounded in one array pass
        (:func:`~elephantasm.domain.exact_round.round_many`), for a pack's served items."""
        flat = np.array([v if v is not None else 0.0 for f in factors for v in f], dtype=np.float64)
        rows = round_many(flat, SCORE_DIGITS).reshape(-1, 5).tolist()
        return [
            ScoreBreakdown(
                importance=r[0], confidence=r[1], recency=r[2], decay=r[3], relevance=None if f[4] is None else r[4]
            )
            for f, r in zip(factors, rows, strict=True)
        ]

    def scored(self, inputs: FactorInputs) -> ScoredCandidate:
        """What ``score_candidate`` returns for these inputs: the score and its rounded breakdown."""
        f = self.factors(inputs)
        return ScoredCandidate(score=self.combine(f), breakdown=self.breakdown(f))
