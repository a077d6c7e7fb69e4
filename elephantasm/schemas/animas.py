"""Anima wire schemas."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from elephantasm.schemas.common import PatchBody, StoredJson, StrictModel


class AnimaCreate(StrictModel):
    """Body of ``POST /api/animas``."""

    name: str = Field(min_length=1, max_length=200)
    description: str | None = Field(default=None, max_length=10_000)
    meta: dict[str, Any] | None = None
    user_id: uuid.UUID | None = None


class AnimaUpdate(PatchBody):
    """Body of ``PATCH /api/animas/{id}``: only the fields given change."""

    not_null = ("name",)

    name: str | None = Field(default=None, min_length=1, max_length=200)
    description: str | None = Field(default=None, max_length=10_000)
    meta: dict[str, Any] | None = None
    user_id: uuid.UUID | None = None


class AnimaRead(BaseModel):
    """An anima as the API returns it."""

    model_config = ConfigDict(from_attributes=True)  # built from table rows
    id: uuid.UUID
    name: str
    description: str | None
    meta: StoredJson
    user_id: uuid.UUID | None
    state_version: int
    last_event_at: datetime | None
    created_at: datetime
    updated_at: datetime
    dream_status: Literal["ok", "backoff", "failed"] = Field(
        default="ok", description="'backoff' after failed dream runs; 'failed' once parked (a manual run clears it)."
    )
    dream_failures: int = Field(default=0, description="Consecutive failed dream runs.")
    dream_retry_at: datetime | None = Field(default=None, description="When the scheduler may try again.")
