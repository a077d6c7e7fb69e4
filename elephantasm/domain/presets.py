"""Presets and :class:`PackConfig`: everything that shapes a pack besides the anima's state.

A preset is a named :class:`PackConfig`. An explicit compile body may override any field
(:func:`resolve_config`). ``self_determined`` adapts its weights to the query text with
deterministic keyword rules (:func:`adapt_weights`), never an LLM, so packs stay reproducible.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic import ValidationError as PydanticValidationError

from elephantasm.domain.errors import ValidationError
from elephantasm.domain.inputs import schema_problems
from elephantasm.domain.lean import RECENCY_QUERY_WORDS
from elephantasm.domain.render import Layer
from elephantasm.domain.scoring import ScoringWeights

DEFAULT_PRESET = "conversational"


class UnknownPresetError(ValidationError):
    """The preset name is not one of :data:`PRESET_NAMES`."""

    def __init__(self, name: str) -> None:
        super().__init__(f"unknown preset {name!r}; valid presets: {', '.join(PRESET_NAMES)}")
        self.name = name


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class LayerShares(_Frozen):
    """Relative share of the token budget per layer (normalised by the packer)."""

    identity: float = Field(default=0.10, ge=0)
    knowledge: float = Field(default=0.25, ge=0)
    long_term: float = Field(default=0.30, ge=0)
    session: float = Field(default=0.30, ge=0)
    temporal: float = Field(default=0.05, ge=0)

    @model_validator(mode="after")
    def _not_all_zero(self) -> LayerShares:
        if sum(self.as_mapping().values()) <= 0:
            raise ValueError("at least one layer share must be > 0")
        return self

    def as_mapping(self) -> dict[Layer, float]:
        """Shares keyed by :class:`Layer`."""
        return {layer: getattr(self, layer.value) for layer in Layer}


class LayerLimits(_Frozen):
    """Maximum items per layer; ``recent_turns`` caps not-yet-distilled session events."""

    knowledge: int = Field(default=10, ge=0)
    long_term: int = Field(default=15, ge=0)
    session: int = Field(default=12, ge=0)
    recent_turns: int = Field(default=8, ge=0)

    def as_mapping(self) -> dict[Layer, int]:
        """Packer limits keyed by :class:`Layer` (session includes its recent turns)."""
        return {
            Layer.KNOWLEDGE: self.knowledge,
            Layer.LONG_TERM: self.long_term,
            Layer.SESSION: self.session + self.recent_turns,
        }


RelevanceFusion = Literal["minmax", "rrf", "minmax_ts_rank"]
"""How relevance is fused; ``minmax_ts_rank`` (Postgres ts_rank, no IDF) is kept for comparison."""


class PackConfig(_Frozen):
    """Everything that shapes a pack; hashed canonically into cache keys and fingerprints."""

    preset_name: str = DEFAULT_PRESET
    adaptive: bool = Field(default=False, description="Adapt weights to the query (self_determined).")
    weights: ScoringWeights = ScoringWeights()
    recency_half_life_hours: float = Field(default=72.0, gt=0)
    decay_half_life_hours: float = Field(default=24.0, gt=0)
    decay_growth: float = Field(default=2.0, ge=1)
    shares: LayerShares = LayerShares()
    limits: LayerLimits = LayerLimits()
    include_identity: bool = True
    include_knowledge: bool = True
    include_long_term: bool = True
    include_session: bool = True
    include_temporal: bool = True
    min_score: float = Field(default=0.0, ge=0, le=1)
    session_gap_minutes: int = Field(default=30, gt=0, description="Silence that ends a session.")
    session_window_hours: float = Field(default=24.0, gt=0, description="How far back a session may reach.")
    relevance_fusion: RelevanceFusion = Field(
        default="minmax",
        description="How cosine and lexical match combine into relevance: min-max of cosine and BM25 "
        "(domain.idf), reciprocal rank fusion (domain.fusion), or min-max of cosine and ts_rank.",
    )

    @property
    def recency_half_life_seconds(self) -> float:
        """Recency half-life in seconds."""
        return self.recency_half_life_hours * 3600.0

    @property
    def decay_half_life_seconds(self) -> float:
        """Base decay half-life (before recall growth) in seconds."""
        return self.decay_half_life_hours * 3600.0

    def canonical_dict(self) -> dict[str, Any]:
        """JSON-safe dict of every field (the input to canonical serialisation)."""
        return self.model_dump(mode="json")

    def canonical_json(self) -> str:
        """Sorted-key, whitespace-free JSON: equal configs give equal bytes."""
        return json.dumps(self.canonical_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


_HOURS_PER_DAY = 24.0

# With a query, relevance dominates (normalised it is ~0.67 of the score, recency ~0.12); without
# one it is dropped and the four factors keep their usual ratios (25/10/25/10).
QUERY_FIRST_WEIGHTS = ScoringWeights(importance=0.25, confidence=0.10, recency=0.25, decay=0.10, relevance=1.40)

PRESETS: Mapping[str, PackConfig] = {
    "conversational": PackConfig(preset_name="conversational", weights=QUERY_FIRST_WEIGHTS),
    "self_determined": PackConfig(preset_name="self_determined", adaptive=True, weights=QUERY_FIRST_WEIGHTS),
    # The conversational preset with ts_rank relevance (no IDF, names not masked), for comparison.
    "conversational_ts_rank": PackConfig(
        preset_name="conversational_ts_rank", weights=QUERY_FIRST_WEIGHTS, relevance_fusion="minmax_ts_rank"
    ),
    "recent": PackConfig(
        preset_name="recent",
        weights=ScoringWeights(importance=0.15, confidence=0.05, recency=0.50, decay=0.05, relevance=0.25),
        recency_half_life_hours=12.0,
        shares=LayerShares(identity=0.08, knowledge=0.12, long_term=0.25, session=0.50, temporal=0.05),
        limits=LayerLimits(knowledge=6, long_term=10, session=20, recent_turns=12),
    ),
    "important": PackConfig(
        preset_name="important",
        weights=ScoringWeights(importance=0.50, confidence=0.20, recency=0.05, decay=0.05, relevance=0.20),
        recency_half_life_hours=30 * _HOURS_PER_DAY,
        decay_half_life_hours=7 * _HOURS_PER_DAY,
        shares=LayerShares(identity=0.10, knowledge=0.35, long_term=0.35, session=0.15, temporal=0.05),
        limits=LayerLimits(knowledge=15, long_term=20, session=8, recent_turns=4),
    ),
}
PRESET_NAMES: tuple[str, ...] = tuple(sorted(PRESETS))


# Preset item limits grow with the budget, one item per this many tokens, so big budgets are used;
# with a query, one per matched-turn line, so layer caps do not stop a pack short of its budget.
TOKENS_PER_ITEM = 80
QUERY_TOKENS_PER_ITEM = 16
# Long-term candidates fetched per arm with a query grow half as fast (the arms' union already holds
# more rows than any one arm), but twice as fast below this budget: a small pack's arms must reach
# past near-misses to the memory whose one turn answers.
QUERY_CANDIDATE_TOKENS_PER_ITEM = 32
QUERY_CANDIDATE_FAST_UNTIL_TOKENS = 2000


def _grown(config: PackConfig, max_tokens: int, tokens_per_item: int) -> LayerLimits:
    limits = config.limits
    preset = PRESETS.get(config.preset_name)
    if preset is None or limits != preset.limits:
        return limits
    n = max(0, max_tokens) // tokens_per_item

    def grow(v: int) -> int:
        return max(v, n) if v > 0 else 0

    return LayerLimits(
        knowledge=grow(limits.knowledge),
        long_term=grow(limits.long_term),
        session=grow(limits.session),
        recent_turns=limits.recent_turns,
    )


def budget_limits(config: PackConfig, max_tokens: int, has_query: bool = False) -> LayerLimits:
    """The item limits a compile of ``max_tokens`` uses under ``config``.

    A preset's own limits are floors that grow to ``max_tokens // TOKENS_PER_ITEM`` (with a query,
    ``// QUERY_TOKENS_PER_ITEM``; a limit of 0 stays 0); limits given explicitly (differing from
    the preset's) are hard caps.
    """
    return _grown(config, max_tokens, QUERY_TOKENS_PER_ITEM if has_query else TOKENS_PER_ITEM)


def candidate_limits(config: PackConfig, max_tokens: int, has_query: bool = False) -> LayerLimits:
    """The limits that size each candidate arm: the budget's plain limits, except long-term memories
    with a query (:data:`QUERY_CANDIDATE_TOKENS_PER_ITEM`; knowledge must pass a relevance floor and
    the session is small)."""
    plain = _grown(config, max_tokens, TOKENS_PER_ITEM)
    if not has_query:
        return plain
    sized_for = max(max_tokens, min(2 * max_tokens, QUERY_CANDIDATE_FAST_UNTIL_TOKENS))
    wide = _grown(config, sized_for, QUERY_CANDIDATE_TOKENS_PER_ITEM)
    return plain.model_copy(update={"long_term": wide.long_term})


# With a query, the current session's reserved share shrinks below this budget (in proportion to
# it) and goes to long-term memories and knowledge: recent chatter unrelated to the question must
# not hold a third of a small pack. Session items still compete for the rest on their scores.
SESSION_SHARE_FULL_TOKENS = 2000


def budget_shares(config: PackConfig, max_tokens: int, has_query: bool) -> dict[Layer, float]:
    """The layer shares a compile of ``max_tokens`` uses under ``config`` (unnormalised).

    With a query and a preset's shares, the session share is scaled by ``max_tokens /
    SESSION_SHARE_FULL_TOKENS`` (at most 1) and the rest moves to long-term memories and knowledge
    in proportion to their shares; otherwise the config's shares as they are.
    """
    shares = config.shares.as_mapping()
    preset = PRESETS.get(config.preset_name)
    if not has_query or preset is None or config.shares != preset.shares:
        return shares
    keep = min(1.0, max(0, max_tokens) / SESSION_SHARE_FULL_TOKENS)
    freed = shares[Layer.SESSION] * (1.0 - keep)
    evidence = shares[Layer.LONG_TERM] + shares[Layer.KNOWLEDGE]
    if freed <= 0 or evidence <= 0:
        return shares
    out = dict(shares)
    out[Layer.SESSION] = shares[Layer.SESSION] * keep
    for layer in (Layer.LONG_TERM, Layer.KNOWLEDGE):
        out[layer] = shares[layer] + freed * shares[layer] / evidence
    return out


def get_preset(name: str | None) -> PackConfig:
    """The named preset (None or '' → :data:`DEFAULT_PRESET`); raises :class:`UnknownPresetError`."""
    key = (name or DEFAULT_PRESET).strip().lower()
    try:
        return PRESETS[key]
    except KeyError:
        raise UnknownPresetError(name or "") from None


def resolve_config(preset: str | None, overrides: Mapping[str, Any] | None = None) -> PackConfig:
    """A preset with explicit overrides merged in (nested dicts merge field by field).

    Raises :class:`UnknownPresetError` or :class:`ValidationError` (with pydantic's message).
    """
    base = get_preset(preset)
    if not overrides:
        return base
    merged = base.canonical_dict()
    for key, value in overrides.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    merged["preset_name"] = base.preset_name
    try:
        return PackConfig.model_validate(merged)
    except PydanticValidationError as exc:
        raise ValidationError(schema_problems(exc)) from exc


_WORD = re.compile(r"[a-z0-9']+")
_IMPORTANCE_WORDS = frozenset(
    "important importance always never prefer prefers preference preferences favorite favourite "
    "must remember allergic allergy critical essential rule rules avoid hate love".split()
)
_QUESTION_WORDS = frozenset("what who whom whose which how why where when does did do is are can".split())


def adapt_weights(base: ScoringWeights, query: str | None) -> ScoringWeights:
    """Query-adaptive weights for ``self_determined`` (deterministic keyword rules).

    Temporal words ("recently", "yesterday", "last time") boost recency; commitment words
    ("important", "always", "never", "prefer") boost importance and confidence; a question
    boosts relevance. No query → ``base`` unchanged.
    """
    if not query:
        return base
    words = set(_WORD.findall(query.lower()))
    w = base.as_dict()
    if words & RECENCY_QUERY_WORDS:
        w["recency"] *= 2.0
        w["decay"] *= 0.5
    if words & _IMPORTANCE_WORDS:
        w["importance"] *= 2.0
        w["confidence"] *= 1.5
    if words & _QUESTION_WORDS or "?" in query:
        w["relevance"] *= 1.5
    return ScoringWeights(**w)


def query_weights(config: PackConfig, weights: ScoringWeights, query: str | None) -> ScoringWeights:
    """With a query that is not about time, a preset's recency and freshness weights step aside.

    A question about a fact is answered by the memory that states it, however old; recency would
    favour last night's chatter over it. A temporal word ("recently", "now") or weights given
    explicitly (differing from the preset's) keep them.
    """
    preset = PRESETS.get(config.preset_name)
    if not query or preset is None or config.weights != preset.weights:
        return weights
    if set(_WORD.findall(query.lower())) & RECENCY_QUERY_WORDS:
        return weights
    return ScoringWeights(**{**weights.as_dict(), "recency": 0.0, "decay": 0.0})


def compile_weights(config: PackConfig, query: str | None) -> ScoringWeights:
    """The (unnormalised) weights a compile uses for ``query`` under ``config``."""
    weights = adapt_weights(config.weights, query) if config.adaptive else config.weights
    return query_weights(config, weights, query)
