"""The closed sets of values the domain knows, as StrEnums (they compare equal to their strings,
so rows and wire values need no conversion). API keys' scopes are in :mod:`elephantasm.domain.keys`."""

from __future__ import annotations

from enum import StrEnum


class EventType(StrEnum):
    """What kind of thing happened to an anima."""

    MESSAGE_IN = "message.in"
    MESSAGE_OUT = "message.out"
    TOOL_CALL = "tool.call"
    TOOL_RESULT = "tool.result"
    SYSTEM = "system"


class MemoryState(StrEnum):
    """Where a memory is in its life: curation moves it between these."""

    ACTIVE = "active"
    DECAYING = "decaying"
    ARCHIVED = "archived"


class KnowledgeType(StrEnum):
    """The kinds of durable statement the dreamer distils."""

    FACT = "FACT"
    CONCEPT = "CONCEPT"
    METHOD = "METHOD"
    PRINCIPLE = "PRINCIPLE"
    EXPERIENCE = "EXPERIENCE"


class DreamStatus(StrEnum):
    """A dream run's status."""

    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"


def values(enum: type[StrEnum]) -> tuple[str, ...]:
    """The enum's values as plain strings, in declaration order."""
    return tuple(member.value for member in enum)
