"""API-key wire schemas. The clear key appears only in the create response."""

from __future__ import annotations

import uuid
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from elephantasm.domain.keys import KeyScope
from elephantasm.schemas.common import Instant, StrictModel


class ApiKeyCreate(StrictModel):
    """Body of ``POST /api/keys``."""

    name: str | None = Field(default=None, max_length=200)
    expires_at: Instant | None = Field(
        default=None, description="Default: the calling key's expiry; never later than it."
    )
    scope: KeyScope | None = Field(
        default=None, description="admin > write > read. Default: the calling key's scope; never above it."
    )


class ApiKeyRead(BaseModel):
    """A key's metadata (never its hash)."""

    model_config = ConfigDict(from_attributes=True)  # built from table rows
    id: uuid.UUID
    name: str | None
    prefix: str
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None
    last_used_at: datetime | None
    scope: KeyScope = KeyScope.ADMIN
    created_by: uuid.UUID | None = None


class ApiKeyCreated(ApiKeyRead):
    """The create response: metadata plus the secret ``key``, shown once."""

    key: str
