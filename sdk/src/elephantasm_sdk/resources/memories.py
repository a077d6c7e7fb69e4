"""Memories: distilled experiences, with provenance back to events."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from .._core import routes_curated as r
from ..models import Event, Memory, MemoryState
from ..pagination import AsyncPager, SyncPager
from ._base import AsyncResource, SyncResource

Id = str | UUID


def _changes(summary: Any, content: Any, importance: Any, confidence: Any, state: Any, meta: Any) -> dict[str, Any]:
    return {"summary": summary, "content": content, "importance": importance, "confidence": confidence,
            "state": state, "meta": meta}  # fmt: skip


class Memories(SyncResource):
    """``/api/memories``."""

    def get(self, memory_id: Id, *, timeout: float | None = None) -> Memory:
        """Fetch one memory."""
        return self._run(r.get_memory(memory_id), timeout)

    def update(
        self,
        memory_id: Id,
        *,
        summary: str | None = None,
        content: str | None = None,
        importance: float | None = None,
        confidence: float | None = None,
        state: str | MemoryState | None = None,
        meta: dict[str, Any] | None = None,
        timeout: float | None = None,
    ) -> Memory:
        """Patch a memory (``None`` leaves a field as is)."""
        fields = _changes(summary, content, importance, confidence, state, meta)
        return self._run(r.update_memory(memory_id, **fields), timeout)

    def delete(self, memory_id: Id, *, timeout: float | None = None) -> None:
        """Delete a memory."""
        return self._run(r.delete_memory(memory_id), timeout)

    def events(self, memory_id: Id, *, timeout: float | None = None) -> list[Event]:
        """The events a memory was distilled from."""
        return self._run(r.memory_events(memory_id), timeout)

    def search(
        self, query: str, *, anima_id: Id | None = None, limit: int | None = None,
        timeout: float | None = None, **options: Any,
    ) -> list[Memory]:  # fmt: skip
        """Semantic search over an anima's memories, best match first."""
        return self._run(r.search_memories(self._anima(anima_id), query, limit, **options), timeout)

    def list(
        self, anima_id: Id | None = None, *, state: str | MemoryState | None = None,
        limit: int | None = None, timeout: float | None = None,
    ) -> SyncPager[Memory]:  # fmt: skip
        """Every memory of an anima (optionally in one ``state``), paged lazily."""
        return self._pager(r.list_memories(self._anima(anima_id), state, limit), timeout)


class AsyncMemories(AsyncResource):
    """``/api/memories`` (async)."""

    async def get(self, memory_id: Id, *, timeout: float | None = None) -> Memory:
        """Fetch one memory."""
        return await self._run(r.get_memory(memory_id), timeout)

    async def update(
        self,
        memory_id: Id,
        *,
        summary: str | None = None,
        content: str | None = None,
        importance: float | None = None,
        confidence: float | None = None,
        state: str | MemoryState | None = None,
        meta: dict[str, Any] | None = None,
        timeout: float | None = None,
    ) -> Memory:
        """Patch a memory (``None`` leaves a field as is)."""
        fields = _changes(summary, content, importance, confidence, state, meta)
        return await self._run(r.update_memory(memory_id, **fields), timeout)

    async def delete(self, memory_id: Id, *, timeout: float | None = None) -> None:
        """Delete a memory."""
        return await self._run(r.delete_memory(memory_id), timeout)

    async def events(self, memory_id: Id, *, timeout: float | None = None) -> list[Event]:
        """The events a memory was distilled from."""
        return await self._run(r.memory_events(memory_id), timeout)

    async def search(
        self, query: str, *, anima_id: Id | None = None, limit: int | None = None,
        timeout: float | None = None, **options: Any,
    ) -> list[Memory]:  # fmt: skip
        """Semantic search over an anima's memories, best match first."""
        return await self._run(r.search_memories(self._anima(anima_id), query, limit, **options), timeout)

    def list(
        self, anima_id: Id | None = None, *, state: str | MemoryState | None = None,
        limit: int | None = None, timeout: float | None = None,
    ) -> AsyncPager[Memory]:  # fmt: skip
        """Every memory of an anima (optionally in one ``state``); iterate with ``async for``."""
        return self._pager(r.list_memories(self._anima(anima_id), state, limit), timeout)
