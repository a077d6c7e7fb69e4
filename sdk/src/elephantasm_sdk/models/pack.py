"""The MemoryPack and its typed layers (docs/design.md §6)."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from pydantic import Field, field_validator

from .common import MappingCompat, SDKModel


def _provenance_ids(items: Any) -> list[str]:
    """Provenance is a list of source ids; tolerate objects carrying an ``id``/``event_id``."""
    out: list[str] = []
    for item in items or []:
        if isinstance(item, dict):
            item = item.get("event_id") or item.get("memory_id") or item.get("id")
        out.append(str(item))
    return out


class ScoreBreakdown(MappingCompat, SDKModel):
    """The factors behind a memory's score, each in [0, 1]."""

    importance: float | None = None
    confidence: float | None = None
    recency: float | None = None
    decay: float | None = None
    relevance: float | None = None


class ScoredMemory(MappingCompat, SDKModel):
    """Memory with scoring breakdown from pack compilation."""

    id: UUID
    summary: str | None = None
    score: float = 0.0
    reason: str | None = None
    breakdown: ScoreBreakdown = Field(default_factory=ScoreBreakdown)
    similarity: float | None = None
    time_start: datetime | None = None
    provenance: list[str] = Field(default_factory=list)

    @field_validator("provenance", mode="before")
    @classmethod
    def _coerce_provenance(cls, v: Any) -> list[str]:
        return _provenance_ids(v)


class ScoredKnowledge(MappingCompat, SDKModel):
    """Knowledge item with score from pack compilation."""

    id: UUID
    content: str = ""
    type: str | None = None
    knowledge_type: str | None = None
    topic: str | None = None
    score: float = 0.0
    similarity: float | None = None
    provenance: list[str] = Field(default_factory=list)

    @field_validator("provenance", mode="before")
    @classmethod
    def _coerce_provenance(cls, v: Any) -> list[str]:
        return _provenance_ids(v)


class TemporalContext(MappingCompat, SDKModel):
    """Temporal awareness context for bridging session gaps."""

    last_event_at: datetime | None = None
    hours_ago: float | None = None
    memory_summary: str | None = None
    formatted: str = ""


class IdentityContext(MappingCompat, SDKModel):
    """Identity layer context from pack compilation."""

    name: str | None = None
    personality_type: str | None = None
    communication_style: str | None = None
    self_reflection: Any = None
    prose: str | None = None


class PackContent(MappingCompat, SDKModel):
    """The layers of a pack plus the rendered prompt text (``context``)."""

    context: str = ""
    identity: IdentityContext | None = None
    session_memories: list[ScoredMemory] = Field(default_factory=list)
    long_term_memories: list[ScoredMemory] = Field(default_factory=list)
    knowledge: list[ScoredKnowledge] = Field(default_factory=list)
    temporal_context: TemporalContext | None = None


class MemoryPack(SDKModel):
    """Compiled, token-budgeted memory pack for LLM context injection."""

    id: UUID
    anima_id: UUID
    query: str | None = None
    preset_name: str | None = None
    session_memory_count: int = 0
    knowledge_count: int = 0
    long_term_memory_count: int = 0
    has_identity: bool = False
    token_count: int = 0
    max_tokens: int | None = None
    compiled_at: datetime | None = None
    created_at: datetime | None = None
    content: PackContent = Field(default_factory=PackContent)
    fingerprint: str | None = None
    encoding: str | None = None
    state_version: int | None = None
    context: str | None = None

    @field_validator("content", mode="before")
    @classmethod
    def _none_content(cls, v: Any) -> Any:
        return {} if v is None else v

    def as_prompt(self) -> str:
        """Return the formatted context string for LLM injection (``content.context``)."""
        return self.content.context or self.context or ""

    @property
    def identity(self) -> IdentityContext | None:
        """The identity layer, if the anima has one."""
        return self.content.identity

    @property
    def session_memories(self) -> list[ScoredMemory]:
        """Memories of the current session, with scores."""
        return self.content.session_memories

    @property
    def long_term_memories(self) -> list[ScoredMemory]:
        """Long-term memories, with scores."""
        return self.content.long_term_memories

    @property
    def knowledge(self) -> list[ScoredKnowledge]:
        """Knowledge items, with scores."""
        return self.content.knowledge

    @property
    def temporal_context(self) -> TemporalContext | None:
        """Temporal awareness context, if present."""
        return self.content.temporal_context
