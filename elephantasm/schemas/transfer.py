"""The anima export format: JSON lines, one record per line, ``kind`` first.

The first line is the ``anima`` header (with ``format``); then every ``event``, ``memory`` (with
its source ``event_ids``), ``knowledge`` (with its source ``memory_ids`` and ``superseded_by``),
the current ``identity`` and every ``identity_version``. Ids are the exporting server's; an import
gives every row a new id (keeping their order) and rewrites the references. Embeddings are not
exported: the importing server computes them with its own embedder. Forgotten (deleted) memories
and knowledge are not exported.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

FORMAT: Final = "elephantasm.anima/1"
MAX_TEXT = 1_000_000
MAX_JSON_DEPTH = 32
"""Deepest nesting accepted in an imported JSON field (``meta``, ``self``): deeper values cannot be
served back reliably, so they are refused up front rather than stored."""


def json_depth(value: Any) -> int:
    """Nesting depth of a JSON value (a scalar is 0), without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        stack.extend((child, depth + 1) for child in children)
    return deepest


class Record(BaseModel):
    """Common base: unknown fields are an error, so a typo never silently drops data; JSON fields
    are at most ``MAX_JSON_DEPTH`` deep."""

    model_config = ConfigDict(extra="forbid")

    @field_validator("meta", "self", check_fields=False)
    @classmethod
    def _shallow(cls, value: Any) -> Any:
        if json_depth(value) > MAX_JSON_DEPTH:
            raise ValueError(f"nested deeper than {MAX_JSON_DEPTH} levels")
        return value


class AnimaRecord(Record):
    """The header line."""

    kind: Literal["anima"] = "anima"
    format: Literal["elephantasm.anima/1"] = FORMAT
    id: uuid.UUID
    name: str = Field(min_length=1, max_length=200)
    description: str | None = Field(default=None, max_length=MAX_TEXT)
    meta: dict[str, Any] = Field(default_factory=dict)
    user_id: uuid.UUID | None = None
    last_event_at: datetime | None = None
    created_at: datetime
    updated_at: datetime


class EventRecord(Record):
    """One event, with the dreamer's ``distilled_at`` (a distilled event is not distilled again)."""

    kind: Literal["event"] = "event"
    id: uuid.UUID
    event_type: str
    role: str | None = None
    author: str | None = None
    summary: str | None = None
    content: str
    occurred_at: datetime
    session_id: str | None = None
    meta: dict[str, Any] = Field(default_factory=dict)
    source_uri: str | None = None
    dedupe_key: str | None = None
    importance_score: float | None = None
    created_at: datetime
    updated_at: datetime
    distilled_at: datetime | None = None


class MemoryRecord(Record):
    """One memory and the events it was distilled from."""

    kind: Literal["memory"] = "memory"
    id: uuid.UUID
    summary: str = Field(max_length=MAX_TEXT)
    content: str | None = Field(default=None, max_length=MAX_TEXT)
    importance: float = Field(ge=0.0, le=1.0)
    confidence: float = Field(ge=0.0, le=1.0)
    state: Literal["active", "decaying", "archived"]
    session_id: str | None = Field(default=None, max_length=200)
    time_start: datetime | None = None
    time_end: datetime | None = None
    recall_count: int = Field(default=0, ge=0, le=2**31 - 1)
    last_recalled_at: datetime | None = None
    merged_into: uuid.UUID | None = None
    meta: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime
    updated_at: datetime
    event_ids: list[uuid.UUID] = Field(default_factory=list)


class KnowledgeRecord(Record):
    """One knowledge item (current or superseded) and the memories it came from."""

    kind: Literal["knowledge"] = "knowledge"
    id: uuid.UUID
    type: Literal["FACT", "CONCEPT", "METHOD", "PRINCIPLE", "EXPERIENCE"]
    topic: str | None = Field(default=None, max_length=200)
    subject_key: str | None = Field(default=None, max_length=300)
    content: str = Field(min_length=1, max_length=MAX_TEXT)
    summary: str | None = Field(default=None, max_length=MAX_TEXT)
    content_hash: str = Field(max_length=64)
    confidence: float = Field(ge=0.0, le=1.0)
    importance: float = Field(ge=0.0, le=1.0)
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    superseded_by: uuid.UUID | None = None
    meta: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime
    updated_at: datetime
    memory_ids: list[uuid.UUID] = Field(default_factory=list)


class IdentityFields(Record):
    """What an identity version holds."""

    version: int = Field(ge=1, le=2**31 - 1)
    personality_type: str | None = Field(default=None, max_length=100)
    communication_style: str | None = Field(default=None, max_length=MAX_TEXT)
    self: dict[str, Any] = Field(default_factory=dict)
    prose: str | None = Field(default=None, max_length=MAX_TEXT)
    created_at: datetime


class IdentityRecord(IdentityFields):
    """The current identity."""

    kind: Literal["identity"] = "identity"
    updated_at: datetime


class IdentityVersionRecord(IdentityFields):
    """One version of the identity's history (the run that wrote it is not exported)."""

    kind: Literal["identity_version"] = "identity_version"
    reason: str | None = Field(default=None, max_length=MAX_TEXT)


BODY_KINDS: dict[str, type[Record]] = {
    "event": EventRecord,
    "memory": MemoryRecord,
    "knowledge": KnowledgeRecord,
    "identity": IdentityRecord,
    "identity_version": IdentityVersionRecord,
}
"""Every record kind after the header, by its ``kind``."""
