"""Memory-pack wire schemas (docs/design.md §6): a superset of what the published SDK 0.2.0 reads.

SDK 0.2.0 constraints shape some choices: ``breakdown`` is ``dict[str, float]`` there, so
``relevance`` is 0.0 (never null) without a query; ``temporal_context`` is either null or has a
non-null ``last_event_at``/``hours_ago``/``formatted``; ``identity.self_reflection`` is a dict or null.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, Field

from elephantasm.domain.presets import PRESET_NAMES, RelevanceFusion
from elephantasm.schemas.common import Instant, StrictModel, zero_or_at_least
from elephantasm.tokens import SUPPORTED_ENCODINGS

MIN_MAX_TOKENS = 200
MAX_MAX_TOKENS = 128_000
MAX_QUERY_CHARS = 4000


class ScoreBreakdownRead(BaseModel):
    """The factors behind a score, each in [0, 1] (relevance is 0.0 without a query)."""

    importance: float
    confidence: float
    recency: float
    decay: float
    relevance: float


class ScoredMemoryRead(BaseModel):
    """A memory-layer item: a distilled memory, or a raw event still waiting for the dreamer."""

    id: uuid.UUID
    kind: str = Field(description="'memory', or 'event' for a not-yet-distilled event.")
    summary: str
    score: float
    reason: str
    breakdown: ScoreBreakdownRead
    similarity: float | None = Field(description="Cosine similarity to the query (null without one).")
    time_start: datetime | None
    time_end: datetime | None = None
    session_id: str | None = None
    provenance: list[uuid.UUID] = Field(description="Source event ids (a raw event's is its own id).")


class ScoredKnowledgeRead(BaseModel):
    """A current knowledge item with its score."""

    id: uuid.UUID
    content: str
    type: str
    knowledge_type: str
    topic: str | None
    score: float
    breakdown: ScoreBreakdownRead
    similarity: float | None
    provenance: list[uuid.UUID] = Field(description="Source event ids, through the item's memories.")


class IdentityRead(BaseModel):
    """The identity layer's data."""

    name: str
    personality_type: str | None = None
    communication_style: str | None = None
    self_reflection: dict[str, Any] | None = None
    prose: str | None = None


class TemporalContextRead(BaseModel):
    """How long since the anima's last event, at the pack's ``as_of``."""

    last_event_at: datetime
    hours_ago: float
    memory_summary: str | None = None
    formatted: str


class PackContentRead(BaseModel):
    """The pack's layers and its rendered prompt (``context``)."""

    context: str
    identity: IdentityRead | None
    session_memories: list[ScoredMemoryRead]
    long_term_memories: list[ScoredMemoryRead]
    knowledge: list[ScoredKnowledgeRead]
    temporal_context: TemporalContextRead | None


class MemoryPackRead(BaseModel):
    """A compiled memory pack. ``context`` repeats ``content.context``; ``token_count`` counts it exactly."""

    id: uuid.UUID
    anima_id: uuid.UUID
    query: str | None
    preset_name: str
    session_id: str | None = Field(default=None, description="The session treated as current.")
    session_memory_count: int
    knowledge_count: int
    long_term_memory_count: int
    has_identity: bool
    token_count: int
    max_tokens: int
    encoding: str
    fingerprint: str
    state_version: int
    as_of: datetime = Field(description="The quantised instant every time-based factor was computed at.")
    layer_tokens: dict[str, int] = Field(description="Tokens of each layer's block (header included).")
    compiled_at: datetime
    created_at: datetime
    context: str
    content: PackContentRead


# ----------------------------------------------------------------------------- requests ----


MIN_WEIGHT = 0.001
MAX_WEIGHT = 1000.0

Weight = Annotated[
    float,
    Field(ge=0, le=MAX_WEIGHT, allow_inf_nan=False, description=f"0 (off), or {MIN_WEIGHT:g} to {MAX_WEIGHT:g}."),
    zero_or_at_least(MIN_WEIGHT, MAX_WEIGHT),
]
"""A scoring weight or budget share: finite, 0 or between ``MIN_WEIGHT`` and ``MAX_WEIGHT`` (only
ratios matter, and this range keeps every ratio and normalised value a normal float)."""

MIN_HOURS = 0.001
"""The shortest half-life or session window (3.6 s): shorter ones score every item the same, and a
subnormal one overflows ``age / half_life`` in Postgres."""


def _hours(maximum: float) -> Any:
    return Field(default=None, ge=MIN_HOURS, le=maximum, description=f"Hours, {MIN_HOURS:g} to {maximum:g}.")


class WeightsIn(StrictModel):
    """Scoring weights to override (only their ratios matter): each 0 (off) or 0.001 to 1000."""

    importance: Weight | None = None
    confidence: Weight | None = None
    recency: Weight | None = None
    decay: Weight | None = None
    relevance: Weight | None = None


class SharesIn(StrictModel):
    """Budget shares per layer to override (normalised by the packer): each 0 (off) or 0.001 to 1000."""

    identity: Weight | None = None
    knowledge: Weight | None = None
    long_term: Weight | None = None
    session: Weight | None = None
    temporal: Weight | None = None


class LimitsIn(StrictModel):
    """Maximum items per layer to override."""

    knowledge: int | None = Field(default=None, ge=0, le=500)
    long_term: int | None = Field(default=None, ge=0, le=500)
    session: int | None = Field(default=None, ge=0, le=500)
    recent_turns: int | None = Field(default=None, ge=0, le=500)


class PackCompileRequest(StrictModel):
    """Body of ``POST /api/packs/compile``: a preset plus explicit overrides of any of its fields."""

    anima_id: uuid.UUID
    query: str | None = Field(default=None, max_length=MAX_QUERY_CHARS)
    preset: str | None = Field(default=None, max_length=64, json_schema_extra={"enum": list(PRESET_NAMES)})
    max_tokens: int | None = Field(default=None, ge=MIN_MAX_TOKENS, le=MAX_MAX_TOKENS)
    encoding: str | None = Field(default=None, max_length=64, json_schema_extra={"enum": list(SUPPORTED_ENCODINGS)})
    session_id: str | None = Field(default=None, max_length=200, description="Treat this session as current.")
    as_of: Instant | None = Field(default=None, description="Compile as of this instant (quantised).")
    weights: WeightsIn | None = None
    shares: SharesIn | None = None
    limits: LimitsIn | None = None
    recency_half_life_hours: float | None = _hours(1e6)
    decay_half_life_hours: float | None = _hours(1e6)
    decay_growth: float | None = Field(default=None, ge=1, le=10)
    min_score: float | None = Field(default=None, ge=0, le=1)
    session_gap_minutes: int | None = Field(default=None, gt=0, le=7 * 24 * 60)
    session_window_hours: float | None = _hours(24 * 365)
    include_identity: bool | None = None
    include_knowledge: bool | None = None
    include_long_term: bool | None = None
    include_session: bool | None = None
    include_temporal: bool | None = None
    relevance_fusion: RelevanceFusion | None = Field(
        default=None,
        description="'minmax' (default: weighted min-max of cosine and BM25), 'rrf' (reciprocal rank fusion) "
        "or 'minmax_ts_rank' (the earlier formula: Postgres ts_rank, no IDF, names not masked).",
    )

    def config_overrides(self) -> dict[str, Any]:
        """The PackConfig fields this body sets (nested partial overrides merge field by field)."""
        skip = {"anima_id", "query", "preset", "max_tokens", "encoding", "session_id", "as_of"}
        return self.model_dump(exclude_none=True, exclude=skip)
