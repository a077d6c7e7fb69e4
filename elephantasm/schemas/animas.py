"""Anima wire schemas."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from elephantasm.schemas.common import StrictModel


class AnimaCreate(StrictModel):
    """Body of ``POST /api/animas``."""

    name: str = Field(min_length=1, max_length=200)
    description: str | None = Field(default=None, max_length=10_000)
    meta: dict[str, Any] | None = None
    user_id: uuid.UUID | None = None


class AnimaUpdate(StrictModel):
    """Body of ``PATCH /api/animas/{id}``: only the fields given change."""

    name: str | None = Field(default=None, min_length=1, max_length=200)
    description: str | None = Field(default=None, max_length=10_000)
    meta: dict[str, Any] | None = None
    user_id: uuid.UUID | None = None


class AnimaRead(BaseModel):
    """An anima as the API returns it."""

    id: uuid.UUID
    name: str
    description: str | None
    meta: dict[str, Any]
    user_id: uuid.UUID | None
    state_version: int
    last_event_at: datetime | None
    created_at: datetime
    updated_at: datetime
