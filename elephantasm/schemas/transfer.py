"""The anima export format: JSON lines, one record per line, ``kind`` first.

The first line is the ``anima`` header (with ``format``); then every ``event``, ``memory`` (with
its source ``event_ids``), ``knowledge`` (with its source ``memory_ids`` and ``superseded_by``),
the current ``identity`` and every ``identity_version``; the last line is the ``trailer`` (counts
per kind and a SHA-256 over the lines before it), so a truncated or altered file is refused.
Embeddings and forgotten rows are not exported. Every rule of the live API holds for every line
(docs/design.md §10).
"""

from __future__ import annotations

import hashlib
import uuid
from collections import Counter
from typing import Any, Final, Literal

from pydantic import Field

from elephantasm.schemas.common import Instant, StrictModel

FORMAT: Final = "elephantasm.anima/1"
MAX_TEXT = 1_000_000


class Record(StrictModel):
    """Common base: unknown fields are an error, so a typo never silently drops data."""


class AnimaRecord(Record):
    """The header line."""

    kind: Literal["anima"] = "anima"
    format: Literal["elephantasm.anima/1"] = FORMAT
    id: uuid.UUID
    name: str = Field(min_length=1, max_length=200)
    description: str | None = Field(default=None, max_length=MAX_TEXT)
    meta: dict[str, Any] = Field(default_factory=dict)
    user_id: uuid.UUID | None = None
    last_event_at: Instant | None = None
    created_at: Instant
    updated_at: Instant


class EventRecord(Record):
    """One event, with the dreamer's ``distilled_at`` (a distilled event is not distilled again)."""

    kind: Literal["event"] = "event"
    id: uuid.UUID
    event_type: str
    role: str | None = None
    author: str | None = None
    summary: str | None = None
    content: str
    occurred_at: Instant
    session_id: str | None = None
    meta: dict[str, Any] = Field(default_factory=dict)
    source_uri: str | None = None
    dedupe_key: str | None = None
    importance_score: float | None = None
    created_at: Instant
    updated_at: Instant
    distilled_at: Instant | None = None


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
    time_start: Instant | None = None
    time_end: Instant | None = None
    recall_count: int = Field(default=0, ge=0, le=2**31 - 1)
    last_recalled_at: Instant | None = None
    merged_into: uuid.UUID | None = None
    meta: dict[str, Any] = Field(default_factory=dict)
    created_at: Instant
    updated_at: Instant
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
    valid_from: Instant | None = None
    valid_to: Instant | None = None
    superseded_by: uuid.UUID | None = None
    meta: dict[str, Any] = Field(default_factory=dict)
    created_at: Instant
    updated_at: Instant
    memory_ids: list[uuid.UUID] = Field(default_factory=list)


class IdentityFields(Record):
    """What an identity version holds."""

    version: int = Field(ge=1, le=2**31 - 1)
    personality_type: str | None = Field(default=None, max_length=100)
    communication_style: str | None = Field(default=None, max_length=MAX_TEXT)
    self: dict[str, Any] = Field(default_factory=dict)
    prose: str | None = Field(default=None, max_length=MAX_TEXT)
    created_at: Instant


class IdentityRecord(IdentityFields):
    """The current identity."""

    kind: Literal["identity"] = "identity"
    updated_at: Instant


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


KINDS: Final = ("anima", *BODY_KINDS)
"""Every record kind a trailer counts, in file order."""


class TrailerRecord(StrictModel):
    """The last line: what the lines before it hold, so an import can tell a whole file from a cut one."""

    kind: Literal["trailer"] = "trailer"
    counts: dict[str, int] = Field(description="Lines of each kind before the trailer.")
    sha256: str = Field(pattern="^[0-9a-f]{64}$", description="SHA-256 over those lines, each followed by a newline.")


class LineTally:
    """Counts lines by kind and hashes them, as the trailer describes them (export and import alike)."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self._hash = hashlib.sha256()

    def add(self, kind: str, line: str) -> None:
        """One record line of ``kind`` (its text, with or without its line ending)."""
        self.counts[kind] += 1
        self._hash.update(line.rstrip("\r\n").encode("utf-8"))
        self._hash.update(b"\n")

    def trailer(self) -> TrailerRecord:
        """The trailer of the lines added so far."""
        return TrailerRecord(counts={k: self.counts[k] for k in KINDS}, sha256=self._hash.hexdigest())

    def mismatch(self, trailer: TrailerRecord) -> str | None:
        """What differs between the lines added and ``trailer`` (missing or extra lines by kind, or a
        changed line), or None when they match."""
        wrong = [
            f"{trailer.counts.get(k, 0)} {k} line(s) announced, {self.counts[k]} found"
            for k in sorted(set(KINDS) | trailer.counts.keys())
            if trailer.counts.get(k, 0) != self.counts[k]
        ]
        if wrong:
            return "; ".join(wrong)
        if trailer.sha256 != self._hash.hexdigest():
            return "the lines' SHA-256 does not match (a line was altered)"
        return None
