"""Event wire schemas."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from elephantasm.domain.enums import EventType
from elephantasm.schemas.common import Instant, NotBlank, StoredJson, StrictModel, one_of


class EventCreate(StrictModel):
    """Body of ``POST /api/events`` (and each item of a batch)."""

    anima_id: uuid.UUID
    event_type: one_of(EventType)  # type: ignore[valid-type]
    content: NotBlank = Field(min_length=1)
    role: str | None = Field(default=None, max_length=64)
    author: str | None = Field(default=None, max_length=200)
    summary: str | None = None
    occurred_at: Instant | None = Field(
        default=None, description="When it happened (default: now); 1900-01-01 up to one day after the server's clock."
    )
    session_id: str | None = Field(default=None, max_length=200)
    meta: dict[str, Any] = Field(default_factory=dict)
    source_uri: str | None = Field(default=None, max_length=4096)
    dedupe_key: str | None = Field(default=None, min_length=1, max_length=200)
    importance_score: float | None = Field(default=None, ge=0.0, le=1.0)


class EventBatchCreate(StrictModel):
    """Body of ``POST /api/events/batch``."""

    events: list[EventCreate] = Field(min_length=1)


class EventRead(BaseModel):
    """An event as the API returns it."""

    model_config = ConfigDict(from_attributes=True)  # built from table rows
    id: uuid.UUID
    anima_id: uuid.UUID
    event_type: str = Field(json_schema_extra={"enum": [t.value for t in EventType]})
    role: str | None
    author: str | None
    summary: str | None
    content: str
    occurred_at: datetime
    session_id: str | None
    meta: StoredJson
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
