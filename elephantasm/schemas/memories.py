"""Memory wire schemas. Reads never carry embeddings or full-text vectors."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from elephantasm.domain.enums import MemoryState
from elephantasm.schemas.common import NotBlank, PatchBody, StoredJson, StrictModel


class MemoryRead(BaseModel):
    """A memory as the API returns it, with its provenance (source event ids, time order)."""

    id: uuid.UUID
    anima_id: uuid.UUID
    summary: str
    content: str | None
    importance: float
    confidence: float
    state: str = Field(json_schema_extra={"enum": [s.value for s in MemoryState]})
    session_id: str | None
    time_start: datetime | None
    time_end: datetime | None
    recall_count: int
    last_recalled_at: datetime | None
    merged_into: uuid.UUID | None
    meta: StoredJson
    created_at: datetime
    updated_at: datetime
    event_ids: list[uuid.UUID] = Field(default_factory=list)
    similarity: float | None = None

    @classmethod
    def of(cls, row: Any, event_ids: list[uuid.UUID] | None = None, similarity: float | None = None) -> MemoryRead:
        """Build from a memories row (a table row or a selected Row) and its provenance."""
        data = {f: getattr(row, f) for f in cls.model_fields if f not in ("event_ids", "similarity")}
        return cls(**data, event_ids=event_ids or [], similarity=similarity)


class MemoryUpdate(PatchBody):
    """Body of ``PATCH /api/memories/{id}``: only the fields given change."""

    not_null = ("summary", "importance", "confidence", "state")

    summary: NotBlank | None = Field(default=None, min_length=1, max_length=10_000)
    content: str | None = Field(default=None, max_length=1_000_000)
    importance: float | None = Field(default=None, ge=0.0, le=1.0)
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    state: MemoryState | None = None
    meta: dict[str, Any] | None = None


class MemorySearch(StrictModel):
    """Body of ``POST /api/memories/search/semantic``."""

    anima_id: uuid.UUID
    query: str = Field(min_length=1, max_length=10_000)
    limit: int = Field(default=10, ge=1, le=100)
    include_archived: bool = False
    min_similarity: float | None = Field(default=None, ge=-1.0, le=1.0)
