"""Value types shared by the distillation engines, and the engine interface (:class:`DistillEngine`).

Everything here is frozen and free of I/O: the dream service turns table rows into these inputs,
hands them to an engine, and writes the drafts back. Drafts carry provenance (event ids, memory
indices) so the writer can link every memory to exactly the events it came from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol, runtime_checkable
from uuid import UUID

KnowledgeType = Literal["FACT", "CONCEPT", "METHOD", "PRINCIPLE", "EXPERIENCE"]


@dataclass(frozen=True, slots=True, kw_only=True)
class EventInput:
    """One pending event as an engine sees it. ``index`` is its position in the run (0-based)."""

    index: int
    id: UUID
    event_type: str
    content: str
    occurred_at: datetime
    role: str | None = None
    author: str | None = None
    summary: str | None = None
    session_id: str | None = None
    importance_score: float | None = None
    meta: Mapping[str, Any] = field(default_factory=dict, hash=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryDraft:
    """A memory to be written, linked to exactly the events in ``event_ids`` (never empty)."""

    summary: str
    content: str
    importance: float
    confidence: float
    time_start: datetime
    time_end: datetime
    session_id: str | None
    event_ids: tuple[UUID, ...]
    meta: Mapping[str, Any] = field(default_factory=dict, hash=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class KnowledgeDraft:
    """A durable statement. ``subject_key`` + ``value`` drive contradiction detection.

    ``subject_key`` is a normalised subject such as ``user.home_city``; two current items with the
    same key and a different normalised ``value`` contradict, and the older one is superseded.
    ``source_memory_indices`` index into :attr:`DistillResult.memories` of the same result. The
    writer should keep ``value`` (e.g. in ``knowledge.meta['value']``) for later comparisons.
    """

    type: KnowledgeType
    topic: str
    subject_key: str | None
    value: str | None
    content: str
    summary: str
    confidence: float
    importance: float
    source_event_ids: tuple[UUID, ...]
    source_memory_indices: tuple[int, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class IdentityDraft:
    """An identity version. ``self`` holds self-reflection, traits and accumulated style stats."""

    personality_type: str | None
    communication_style: str | None
    self: Mapping[str, Any] = field(default_factory=dict, hash=False)
    prose: str | None = None
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class Usage:
    """LLM usage: HTTP calls attempted (retries included) and tokens billed."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.calls + other.calls,
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class DistillResult:
    """Everything one engine run produced, to be written in one short transaction.

    ``identity`` is ``None`` when the identity should not change. ``fallback_event_ids`` lists the
    events an LLM engine left uncovered and that were distilled offline instead (recorded, not lost).
    """

    memories: tuple[MemoryDraft, ...]
    knowledge: tuple[KnowledgeDraft, ...]
    usage: Usage = Usage()
    identity: IdentityDraft | None = None
    fallback_event_ids: tuple[UUID, ...] = ()


class DistillError(Exception):
    """An engine could not distil a batch after its retries; nothing partial is returned.

    ``usage`` carries what the failed attempts cost so the run journal can still record it.
    """

    def __init__(self, message: str, *, usage: Usage | None = None, attempts: int = 0) -> None:
        super().__init__(message)
        self.usage = usage or Usage()
        self.attempts = attempts


@runtime_checkable
class DistillEngine(Protocol):
    """Turns pending events into memory, knowledge and identity drafts.

    ``name`` and ``model`` are recorded on the dream run. ``distil`` either returns a complete
    result for all ``events`` (every event cited by at least one memory) or raises
    :class:`DistillError`; it never returns a partial result.
    """

    name: str

    @property
    def model(self) -> str | None:
        """The model recorded on the run (read-only here, so an engine may narrow it to ``str``)."""
        ...

    async def distil(self, events: list[EventInput], existing_identity: IdentityDraft | None) -> DistillResult:
        """Distil ``events`` (ordered or not) given the anima's current identity."""
        ...
