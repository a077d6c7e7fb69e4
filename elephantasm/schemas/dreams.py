"""Dream-run (journal) wire schemas."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field

from elephantasm.db.models import DREAM_STATUSES
from elephantasm.schemas.common import StoredJson, StrictModel


class DreamTrigger(StrictModel):
    """Body of ``POST /api/dreams/trigger``."""

    anima_id: uuid.UUID


class DreamRunRead(BaseModel):
    """One dream run: what started it, which engine, how long, what it did, and why it failed.

    ``counts`` holds the detailed counters (chunks, merges, supersessions, state transitions…)
    and ``counts.timings`` the seconds spent per phase.
    """

    id: uuid.UUID
    anima_id: uuid.UUID
    status: str = Field(json_schema_extra={"enum": list(DREAM_STATUSES)})
    trigger: str
    engine: str
    model: str | None
    worker_id: str | None
    started_at: datetime
    heartbeat_at: datetime | None
    finished_at: datetime | None
    duration_seconds: float | None = None
    events_read: int
    memories_created: int
    knowledge_created: int
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    counts: dict[str, Any]
    error: str | None

    @classmethod
    def of(cls, row: Any) -> Self:
        """Build from a ``dream_runs`` row."""
        data = {f: getattr(row, f) for f in DreamRunRead.model_fields if f != "duration_seconds"}
        duration = (row.finished_at - row.started_at).total_seconds() if row.finished_at else None
        return cls(**data, duration_seconds=duration)


class DreamActionRead(BaseModel):
    """One journal entry: created, merged, absorbed, superseded, archived, decaying, reactivated, updated."""

    model_config = ConfigDict(from_attributes=True)  # built from table rows
    id: uuid.UUID
    action: str
    target_type: str
    target_id: uuid.UUID | None
    before: StoredJson | None
    after: StoredJson | None
    created_at: datetime


class DreamRunDetail(DreamRunRead):
    """A run with its journal (the first ``actions_limit`` entries; ``action_count`` in all)."""

    actions: list[DreamActionRead] = Field(default_factory=list)
    action_count: int = 0
