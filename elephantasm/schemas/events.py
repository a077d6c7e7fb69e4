"""Event wire schemas."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field, field_validator

from elephantasm.domain.enums import EventType
from elephantasm.schemas.common import StrictModel, one_of


class EventCreate(StrictModel):
    """Body of ``POST /api/events`` (and each item of a batch)."""

    anima_id: uuid.UUID
    event_type: one_of(EventType)  # type: ignore[valid-type]
    content: str = Field(min_length=1)
    role: str | None = Field(default=None, max_length=64)
    author: str | None = Field(default=None, max_length=200)
    summary: str | None = None
    occurred_at: datetime | None = None
    session_id: str | None = Field(default=None, max_length=200)
    meta: dict[str, Any] = Field(default_factory=dict)
    source_uri: str | None = Field(default=None, max_length=4096)
    dedupe_key: str | None = Field(default=None, min_length=1, max_length=200)
    importance_score: float | None = Field(default=None, ge=0.0, le=1.0)

    @field_validator("content")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("content must not be empty or whitespace")
        return value

    @field_validator("occurred_at")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.tzinfo is None:
            raise ValueError("occurred_at must carry a timezone offset (e.g. 2026-01-01T12:00:00Z)")
        return value


class EventBatchCreate(StrictModel):
    """Body of ``POST /api/events/batch``."""

    events: list[EventCreate] = Field(min_length=1)


class EventRead(BaseModel):
    """An event as the API returns it."""

    id: uuid.UUID
    anima_id: uuid.UUID
    event_type: str
    role: str | None
    author: str | None
    summary: str | None
    content: str
    occurred_at: datetime
    session_id: str | None
    meta: dict[str, Any]
    source_uri: str | None
    dedupe_key: str | None
    importance_score: float | None
    created_at: datetime
    updated_at: datetime
    distilled_at: datetime | None = None


class EventBatchRead(BaseModel):
    """Response of a batch: the stored events in request order."""

    items: list[EventRead]
    created: int
    deduplicated: int
