"""From candidates to pack items and back to wire items: scoring, reasons, identity and temporal lines."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from elephantasm.domain.lean import IdentityText, identity_lines, lean_text
from elephantasm.domain.presets import PackConfig
from elephantasm.domain.render import Layer, PackItem
from elephantasm.domain.scoring import (
    FactorInputs,
    Factors,
    FactorScorer,
    ScoreBreakdown,
    ScoredCandidate,
    ScoringWeights,
)
from elephantasm.domain.temporal import TemporalContext
from elephantasm.services.packs.candidates import Candidate

SIMILARITY_DIGITS = 6


class LazyScored:
    """A candidate's score, and its rounded factor breakdown made on first use.

    Stands in for :class:`ScoredCandidate` in a pack item's ``ref``: every candidate needs its
    score to be ranked, only the served (and inspected) ones need the breakdown, so the factors
    are computed for those only (from the same inputs, by the same scorer: the same floats).
    """

    __slots__ = ("_breakdown", "_inputs", "_scorer", "score")

    def __init__(self, score: float, scorer: FactorScorer, inputs: FactorInputs) -> None:
        self.score = score
        self._scorer = scorer
        self._inputs = inputs
        self._breakdown: ScoreBreakdown | None = None

    @property
    def factors(self) -> Factors:
        """The unrounded factors behind :attr:`score`."""
        return self._scorer.factors(self._inputs)

    @property
    def breakdown(self) -> ScoreBreakdown:
        """The factors behind :attr:`score`, rounded."""
        if self._breakdown is None:
            self._breakdown = FactorScorer.breakdown(self.factors)
        return self._breakdown


@dataclass(frozen=True, slots=True)
class Scorer:
    """Scores candidates for one compile (one ``as_of``, one weighting)."""

    config: PackConfig
    weights: ScoringWeights
    has_query: bool
    as_of: datetime
    # Whether memory lines show their dates (domain.lean.wants_dates of the query).
    dated: bool = True
    _fast: FactorScorer = field(init=False, repr=False, compare=False)
    # The normalised weights, once per compile (strongest() runs for every served item).
    _normalised: ScoringWeights = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_normalised", self.weights.normalised(self.has_query))
        fast = FactorScorer(
            as_of=self.as_of,
            weights=self.weights,
            recency_half_life_seconds=self.config.recency_half_life_seconds,
            decay_half_life_seconds=self.config.decay_half_life_seconds,
            decay_growth=self.config.decay_growth,
            has_query=self.has_query,
        )
        object.__setattr__(self, "_fast", fast)

    def items(
        self, candidates: Sequence[Candidate], relevances: Sequence[float | None] | None = None
    ) -> list[PackItem]:
        """A pack item per candidate, each carrying ``(candidate, scored)`` as its ``ref`` (``scored``: a
        :class:`LazyScored`): the domain's five-factor score (:class:`FactorScorer`). ``relevances``:
        each candidate's, normalised within the compile's candidates (PackConfig.relevance_fusion);
        they count only in a compile with a query."""
        rel = relevances if self.has_query and relevances is not None else [None] * len(candidates)
        inputs = [
            (c.importance, c.confidence, c.happened_at, c.touched_at, c.created_at, c.recall_count, r)
            for c, r in zip(candidates, rel, strict=True)
        ]
        fast, dated = self._fast, self.dated
        out = []
        for c, i in zip(candidates, inputs, strict=True):
            score = fast.score(i)
            # Prompt lines drop filler and repeated speaker labels; the wire keeps the stored text.
            # With a query, a memory shows the turn that matched it (``snippet``) when there is one.
            text = c.text if c.kind == "knowledge" else lean_text(c.snippet or c.text)
            # Positional (a frozen dataclass's keyword call costs more); ``provenance`` stays empty:
            # the packer never reads it, and the wire takes it from the candidate.
            out.append(
                PackItem(str(c.id), text, score, c.happened_at, (), c.label, (c, LazyScored(score, fast, i)), dated)
            )
        return out

    def strongest(self, scored: ScoredCandidate | LazyScored) -> str:
        """The factor contributing most to a score (decay contributes as freshness, 1 − decay)."""
        w = self._normalised
        b = scored.breakdown
        parts = {
            "importance": w.importance * b.importance,
            "confidence": w.confidence * b.confidence,
            "recency": w.recency * b.recency,
            "freshness": w.decay * (1.0 - b.decay),
            "relevance": w.relevance * (b.relevance or 0.0),
        }
        return max(parts, key=lambda k: (parts[k], k))


_REASONS = {
    (Layer.SESSION, "memory"): "memory of the current session",
    (Layer.SESSION, "event"): "recent turn of the current session (not yet distilled)",
    (Layer.LONG_TERM, "memory"): "long-term memory",
    (Layer.LONG_TERM, "event"): "earlier event (not yet distilled)",
}


def _breakdown(scored: ScoredCandidate | LazyScored) -> dict[str, float]:
    # SDK 0.2.0 parses breakdown as dict[str, float]: relevance must be a number, 0.0 without a query.
    b = scored.breakdown
    return {
        "importance": b.importance,
        "confidence": b.confidence,
        "recency": b.recency,
        "decay": b.decay,
        "relevance": b.relevance or 0.0,
    }


def _similarity(c: Candidate) -> float | None:
    return None if c.cosine is None else round(float(c.cosine), SIMILARITY_DIGITS)


def memory_wire(layer: Layer, item: PackItem, scorer: Scorer) -> dict[str, Any]:
    """A session/long-term item as ``ScoredMemoryRead`` data."""
    c, scored = item.ref
    return {
        "id": c.id,
        "kind": c.kind,
        "summary": c.text,
        "score": scored.score,
        "reason": f"{_REASONS[(layer, c.kind)]}; strongest factor: {scorer.strongest(scored)}",
        "breakdown": _breakdown(scored),
        "similarity": _similarity(c),
        "time_start": c.time_start,
        "time_end": c.time_end,
        "session_id": c.session_id,
        "provenance": list(c.provenance),
    }


def knowledge_wire(item: PackItem) -> dict[str, Any]:
    """A knowledge item as ``ScoredKnowledgeRead`` data."""
    c, scored = item.ref
    return {
        "id": c.id,
        "content": c.text,
        "type": c.label,
        "knowledge_type": c.label,
        "topic": c.topic,
        "score": scored.score,
        "breakdown": _breakdown(scored),
        "similarity": _similarity(c),
        "provenance": list(c.provenance),
    }


@dataclass(frozen=True, slots=True)
class IdentityData:
    """The anima's name and its identity row (if the dreamer has written one)."""

    name: str
    description: str | None
    personality_type: str | None
    communication_style: str | None
    self_reflection: dict[str, Any] | None
    prose: str | None

    def wire(self) -> dict[str, Any]:
        """``IdentityRead`` data."""
        return {
            "name": self.name,
            "personality_type": self.personality_type,
            "communication_style": self.communication_style,
            "self_reflection": self.self_reflection or None,
            "prose": self.prose,
        }


def identity_items(identity: IdentityData, *, brief: bool = False) -> list[PackItem]:
    """At most three short identity lines (:func:`~elephantasm.domain.lean.identity_lines`);
    scores only order them: name, personality, style."""
    fields = IdentityText(
        identity.name, identity.description, identity.personality_type, identity.communication_style, identity.prose
    )
    lines = identity_lines(fields, brief=brief)
    return [PackItem(f"identity:{key}", text, score=1.0 - 0.05 * i) for i, (key, text) in enumerate(lines)]


def temporal_item(context: TemporalContext) -> PackItem:
    """The temporal context as one line."""
    return PackItem("temporal", context.formatted)
