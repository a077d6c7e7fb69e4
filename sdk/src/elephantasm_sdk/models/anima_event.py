"""Anima and event models (wire contract, docs/design.md §6)."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from pydantic import BaseModel, Field, field_validator

from .common import EventType, SDKModel

VALID_EVENT_TYPES = frozenset(t.value for t in EventType)


class Anima(SDKModel):
    """Agent entity that owns memories and events."""

    id: UUID
    name: str
    description: str | None = None
    meta: dict[str, Any] | None = None
    user_id: UUID | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None


class AnimaCreate(BaseModel):
    """Data required to create an Anima."""

    name: str
    description: str | None = None
    meta: dict[str, Any] | None = None
    user_id: UUID | None = None


class Event(SDKModel):
    """Atomic unit of experience (message, tool call, etc.)."""

    id: UUID
    anima_id: UUID
    event_type: str
    role: str | None = None
    author: str | None = None
    summary: str | None = None
    content: str = ""
    occurred_at: datetime | None = None
    session_id: str | None = None
    meta: dict[str, Any] = Field(default_factory=dict)
    source_uri: str | None = None
    dedupe_key: str | None = None
    importance_score: float | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None


class EventCreate(BaseModel):
    """Data required to create an Event."""

    anima_id: UUID
    event_type: str
    content: str
    role: str | None = None
    author: str | None = None
    summary: str | None = None
    occurred_at: datetime | None = None
    session_id: str | None = None
    meta: dict[str, Any] = Field(default_factory=dict)
    source_uri: str | None = None
    dedupe_key: str | None = None
    importance_score: float | None = Field(default=None, ge=0.0, le=1.0)

    @field_validator("event_type")
    @classmethod
    def validate_event_type(cls, v: str) -> str:
        """Reject event types the server does not know."""
        if v not in VALID_EVENT_TYPES:
            raise ValueError(f"Invalid event_type '{v}'. Valid values: {sorted(VALID_EVENT_TYPES)}.")
        return v
