"""Models of what the dreamer curates: memories, knowledge, identity, dream runs; plus API keys."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from pydantic import AliasChoices, Field

from .common import FINAL_DREAM_STATUSES, SDKModel


class Memory(SDKModel):
    """A distilled experience: a few related events, summarised and scored."""

    id: UUID
    anima_id: UUID
    summary: str | None = None
    content: str | None = None
    importance: float | None = None
    confidence: float | None = None
    state: str | None = None
    session_id: str | None = None
    time_start: datetime | None = None
    time_end: datetime | None = None
    recall_count: int | None = None
    last_recalled_at: datetime | None = None
    recency_score: float | None = None
    decay_score: float | None = None
    similarity: float | None = None
    meta: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime | None = None
    updated_at: datetime | None = None


class Knowledge(SDKModel):
    """A durable statement distilled from memories; superseded items keep ``valid_to``."""

    id: UUID
    anima_id: UUID
    type: str | None = None
    topic: str | None = None
    content: str = ""
    summary: str | None = None
    confidence: float | None = None
    importance: float | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    superseded_by: UUID | None = None
    similarity: float | None = None
    meta: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime | None = None
    updated_at: datetime | None = None


class Identity(SDKModel):
    """An anima's current identity."""

    id: UUID | None = None
    anima_id: UUID
    version: int | None = None
    personality_type: str | None = None
    communication_style: str | None = None
    self_reflection: Any = Field(default=None, validation_alias=AliasChoices("self_reflection", "self"))
    prose: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None


class IdentityVersion(Identity):
    """One historical version of an identity, with the reason it changed."""

    reason: str | None = None
    run_id: UUID | None = None


class DreamRun(SDKModel):
    """One dreamer run over one anima (a "dream session")."""

    id: UUID
    anima_id: UUID
    status: str
    trigger: str | None = None
    engine: str | None = None
    model: str | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    events_read: int | None = None
    memories_created: int | None = None
    knowledge_created: int | None = None
    llm_calls: int | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    counts: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None

    @property
    def is_finished(self) -> bool:
        """True once the run has completed or failed."""
        return self.status in FINAL_DREAM_STATUSES


class ApiKey(SDKModel):
    """An API key's metadata; ``key`` (the secret) is only present in the create response."""

    id: UUID
    name: str | None = None
    prefix: str | None = None
    key: str | None = None
    created_at: datetime | None = None
    expires_at: datetime | None = None
    revoked_at: datetime | None = None
    last_used_at: datetime | None = None
    scope: str | None = None
    created_by: UUID | None = None
