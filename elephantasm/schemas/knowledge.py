"""Knowledge wire schemas. Reads never carry embeddings or full-text vectors."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from elephantasm.db.models import KNOWLEDGE_TYPES
from elephantasm.schemas.common import StoredJson, StrictModel


class KnowledgeRead(BaseModel):
    """A knowledge item with its provenance: source memories and, through them, source events.

    ``valid_to``/``superseded_by`` are set on an item a newer statement replaced; it stays readable
    (``/history``) but is no longer current.
    """

    id: uuid.UUID
    anima_id: uuid.UUID
    type: str = Field(json_schema_extra={"enum": list(KNOWLEDGE_TYPES)})
    topic: str | None
    subject_key: str | None
    content: str
    summary: str | None
    confidence: float
    importance: float
    valid_from: datetime | None
    valid_to: datetime | None
    superseded_by: uuid.UUID | None
    meta: StoredJson
    created_at: datetime
    updated_at: datetime
    memory_ids: list[uuid.UUID] = Field(default_factory=list)
    event_ids: list[uuid.UUID] = Field(default_factory=list)
    similarity: float | None = None

    @classmethod
    def of(
        cls,
        row: Any,
        provenance: tuple[list[uuid.UUID], list[uuid.UUID]] | None = None,
        similarity: float | None = None,
    ) -> KnowledgeRead:
        """Build from a knowledge row and its (memory ids, event ids) provenance."""
        data = {f: getattr(row, f) for f in cls.model_fields if f not in ("memory_ids", "event_ids", "similarity")}
        memory_ids, event_ids = provenance or ([], [])
        return cls(**data, memory_ids=memory_ids, event_ids=event_ids, similarity=similarity)


class KnowledgeSearch(StrictModel):
    """Body of ``POST /api/knowledge/search/semantic``."""

    anima_id: uuid.UUID
    query: str = Field(min_length=1, max_length=10_000)
    limit: int = Field(default=10, ge=1, le=100)
    include_superseded: bool = False
    min_similarity: float | None = Field(default=None, ge=-1.0, le=1.0)
