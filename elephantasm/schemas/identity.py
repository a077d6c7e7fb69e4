"""Identity wire schemas."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Self

from pydantic import BaseModel, Field

from elephantasm.schemas.common import StoredJson, StrictModel


class _IdentityFields(BaseModel):
    """What every identity version holds; ``self_reflection`` repeats ``self['self_reflection']``."""

    id: uuid.UUID
    anima_id: uuid.UUID
    version: int
    personality_type: str | None
    communication_style: str | None
    self: StoredJson
    self_reflection: str | None = None
    prose: str | None

    @classmethod
    def of(cls, row: Any) -> Self:
        """Build from an ``identities`` or ``identity_history`` row."""
        data = {f: getattr(row, f) for f in cls.model_fields if f != "self_reflection" and hasattr(row, f)}
        reflection = (row.self or {}).get("self_reflection")
        return cls(**data, self_reflection=reflection if isinstance(reflection, str) else None)


class IdentityRead(_IdentityFields):
    """An anima's current identity. ``self_reflection`` repeats ``self['self_reflection']``."""

    created_at: datetime
    updated_at: datetime


class IdentityVersionRead(_IdentityFields):
    """One version of an identity in its history, with why it changed and the run that changed it."""

    reason: str | None
    run_id: uuid.UUID | None
    created_at: datetime


class IdentityRestore(StrictModel):
    """Body of ``POST /api/identities/anima/{id}/restore``."""

    version: int = Field(ge=1, le=2**31 - 1)
