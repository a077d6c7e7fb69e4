"""Knowledge: durable statements distilled from memories, with history."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from .._core import routes_curated as r
from ..models import Knowledge, KnowledgeType
from ..pagination import AsyncPager, SyncPager
from ._base import AsyncResource, SyncResource

Id = str | UUID


class KnowledgeResource(SyncResource):
    """``/api/knowledge``."""

    def get(self, knowledge_id: Id, *, timeout: float | None = None) -> Knowledge:
        """Fetch one knowledge item."""
        return self._run(r.get_knowledge(knowledge_id), timeout)

    def history(self, knowledge_id: Id, *, timeout: float | None = None) -> list[Knowledge]:
        """The item and the versions it superseded."""
        return self._run(r.knowledge_history(knowledge_id), timeout)

    def delete(self, knowledge_id: Id, *, timeout: float | None = None) -> None:
        """Forget one knowledge item (its source memories stay)."""
        return self._run(r.delete_knowledge(knowledge_id), timeout)

    def search(
        self, query: str, *, anima_id: Id | None = None, limit: int | None = None,
        timeout: float | None = None, **options: Any,
    ) -> list[Knowledge]:  # fmt: skip
        """Semantic search over an anima's knowledge, best match first."""
        return self._run(r.search_knowledge(self._anima(anima_id), query, limit, **options), timeout)

    def list(
        self, anima_id: Id | None = None, *, type: str | KnowledgeType | None = None,
        topic: str | None = None, limit: int | None = None, timeout: float | None = None,
    ) -> SyncPager[Knowledge]:  # fmt: skip
        """Every knowledge item of an anima, optionally of one ``type`` or ``topic``, paged lazily."""
        return self._pager(r.list_knowledge(self._anima(anima_id), type, topic, limit), timeout)


class AsyncKnowledgeResource(AsyncResource):
    """``/api/knowledge`` (async)."""

    async def get(self, knowledge_id: Id, *, timeout: float | None = None) -> Knowledge:
        """Fetch one knowledge item."""
        return await self._run(r.get_knowledge(knowledge_id), timeout)

    async def history(self, knowledge_id: Id, *, timeout: float | None = None) -> list[Knowledge]:
        """The item and the versions it superseded."""
        return await self._run(r.knowledge_history(knowledge_id), timeout)

    async def delete(self, knowledge_id: Id, *, timeout: float | None = None) -> None:
        """Forget one knowledge item (its source memories stay)."""
        return await self._run(r.delete_knowledge(knowledge_id), timeout)

    async def search(
        self, query: str, *, anima_id: Id | None = None, limit: int | None = None,
        timeout: float | None = None, **options: Any,
    ) -> list[Knowledge]:  # fmt: skip
        """Semantic search over an anima's knowledge, best match first."""
        return await self._run(r.search_knowledge(self._anima(anima_id), query, limit, **options), timeout)

    def list(
        self, anima_id: Id | None = None, *, type: str | KnowledgeType | None = None,
        topic: str | None = None, limit: int | None = None, timeout: float | None = None,
    ) -> AsyncPager[Knowledge]:  # fmt: skip
        """Every knowledge item of an anima; iterate with ``async for``."""
        return self._pager(r.list_knowledge(self._anima(anima_id), type, topic, limit), timeout)
