"""Shared model base and enums."""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict


class SDKModel(BaseModel):
    """Base of every response model: unknown fields from newer servers are kept, never rejected."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)


class MappingCompat:
    """Dict-style read access (``m["key"]``, ``m.get("key")``) for models that were plain dicts in 0.2.0."""

    def _has_key(self, key: str) -> bool:
        model = self
        return key in type(model).model_fields or key in (model.model_extra or {})  # type: ignore[attr-defined]

    def __getitem__(self, key: str) -> Any:
        if not self._has_key(key):
            raise KeyError(key)
        return getattr(self, key)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._has_key(key)

    def get(self, key: str, default: Any = None) -> Any:
        """Return the field ``key`` if present (and not None), else ``default``."""
        value = getattr(self, key, None) if self._has_key(key) else None
        return default if value is None else value


class EventType(str, Enum):
    """Event types for message capture."""

    MESSAGE_IN = "message.in"
    MESSAGE_OUT = "message.out"
    TOOL_CALL = "tool.call"
    TOOL_RESULT = "tool.result"
    SYSTEM = "system"


class MemoryState(str, Enum):
    """Lifecycle states for memory recall and curation."""

    ACTIVE = "active"
    DECAYING = "decaying"
    ARCHIVED = "archived"


class KnowledgeType(str, Enum):
    """Kinds of knowledge the dreamer distils."""

    FACT = "FACT"
    CONCEPT = "CONCEPT"
    METHOD = "METHOD"
    PRINCIPLE = "PRINCIPLE"
    EXPERIENCE = "EXPERIENCE"


class DreamStatus(str, Enum):
    """States of a dream run; ``completed`` and ``failed`` are final."""

    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"


FINAL_DREAM_STATUSES = frozenset({DreamStatus.COMPLETED.value, DreamStatus.FAILED.value})
