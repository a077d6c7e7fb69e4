"""Shared wire shapes: pages and opaque cursors."""

from __future__ import annotations

import base64
import json
import uuid
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any, Generic, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict

from elephantasm.domain.errors import ValidationError

T = TypeVar("T")


class Page(BaseModel, Generic[T]):
    """One page of a list endpoint; pass ``next_cursor`` back as ``cursor`` for the next one."""

    items: list[T]
    next_cursor: str | None = None


class StrictModel(BaseModel):
    """Request bodies: unknown fields are an error, so a typo never silently drops data."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


def encode_cursor(at: datetime, row_id: uuid.UUID) -> str:
    """An opaque keyset cursor over (timestamp, id)."""
    raw = json.dumps([at.isoformat(), str(row_id)]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, uuid.UUID]:
    """Inverse of :func:`encode_cursor`; a malformed cursor is a 422 naming ``cursor``."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        at, row_id = json.loads(base64.urlsafe_b64decode(padded.encode()))
        return datetime.fromisoformat(at), uuid.UUID(row_id)
    except (ValueError, TypeError) as exc:
        raise ValidationError("cursor: malformed pagination cursor") from exc


def one_of(enum: type[StrEnum]) -> Any:
    """``enum`` as a field type whose error lists the valid values ("unknown 'x'; valid values: a, b")."""
    valid = [m.value for m in enum]

    def check(value: Any) -> Any:
        if isinstance(value, str) and value not in valid:
            raise ValueError(f"unknown {value!r}; valid values: {', '.join(valid)}")
        return value

    return Annotated[enum, BeforeValidator(check)]
