"""API-key wire schemas. The clear key appears only in the create response."""

from __future__ import annotations

import uuid
from datetime import datetime

from pydantic import BaseModel, Field

from elephantasm.schemas.common import Instant, StrictModel


class ApiKeyCreate(StrictModel):
    """Body of ``POST /api/keys``."""

    name: str | None = Field(default=None, max_length=200)
    expires_at: Instant | None = None


class ApiKeyRead(BaseModel):
    """A key's metadata (never its hash)."""

    id: uuid.UUID
    name: str | None
    prefix: str
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None
    last_used_at: datetime | None


class ApiKeyCreated(ApiKeyRead):
    """The create response: metadata plus the secret ``key``, shown once."""

    key: str
