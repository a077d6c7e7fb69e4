"""Module-level convenience functions over a lazily created default client (as in 0.2.0)."""

from __future__ import annotations

import threading
from datetime import datetime
from typing import Any
from uuid import UUID

from ._client import Elephantasm
from .models import Anima, Event, EventType, MemoryPack

_default_client: Elephantasm | None = None
_lock = threading.Lock()


def _get_client() -> Elephantasm:
    """The default client, configured from ``ELEPHANTASM_*`` environment variables.

    Raises:
        ValueError: If ELEPHANTASM_API_KEY is not set.
    """
    global _default_client
    with _lock:
        if _default_client is None:
            _default_client = Elephantasm()
        return _default_client


def create_anima(
    name: str,
    description: str | None = None,
    meta: dict[str, Any] | None = None,
) -> Anima:
    """Create a new anima (agent entity) with the default client.

    Example:
        >>> from elephantasm_sdk import create_anima
        >>> anima = create_anima("my-agent", description="Test agent")
    """
    return _get_client().create_anima(name, description, meta)


def inject(
    anima_id: str | UUID | None = None,
    query: str | None = None,
    preset: str | None = None,
    max_tokens: int | None = None,
    encoding: str | None = None,
) -> MemoryPack | None:
    """Retrieve the latest memory pack for context injection, or None if there is none yet.

    Args:
        anima_id: Anima ID. Falls back to ELEPHANTASM_ANIMA_ID.
        query: Optional query for semantic retrieval.
        preset: Optional preset name.
        max_tokens: Hard cap on the rendered prompt's tokens.
        encoding: tiktoken encoding used to count them.

    Example:
        >>> from elephantasm_sdk import inject
        >>> pack = inject()
        >>> if pack:
        ...     system_prompt = f"You are a helpful assistant.\\n\\n{pack.as_prompt()}"
    """
    return _get_client().inject(anima_id, query, preset, max_tokens, encoding)


def extract(
    event_type: str | EventType,
    content: str,
    anima_id: str | UUID | None = None,
    session_id: str | None = None,
    role: str | None = None,
    author: str | None = None,
    occurred_at: datetime | None = None,
    meta: dict[str, Any] | None = None,
    importance_score: float | None = None,
    *,
    dedupe_key: str | None = None,
) -> Event:
    """Capture an event (message, tool call, etc.) with the default client.

    Example:
        >>> from elephantasm_sdk import extract, EventType
        >>> extract(EventType.MESSAGE_IN, "Hello!", role="user")
    """
    return _get_client().extract(
        event_type, content, anima_id, session_id, role, author, occurred_at, meta, importance_score,
        dedupe_key=dedupe_key,
    )  # fmt: skip
