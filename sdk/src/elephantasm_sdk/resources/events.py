"""Events: what happened to an anima (messages, tool calls). ``extract`` records them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any
from uuid import UUID

from .._core import routes
from ..models import Event, EventCreate, EventType
from ..pagination import AsyncPager, SyncPager
from ._base import AsyncResource, SyncResource

BatchItem = EventCreate | Mapping[str, Any]


class Events(SyncResource):
    """``/api/events``."""

    def extract(
        self,
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
        summary: str | None = None,
        source_uri: str | None = None,
        dedupe_key: str | None = None,
        timeout: float | None = None,
    ) -> Event:
        """Record one event. A ``dedupe_key`` (uuid4 hex unless given) makes retries create it once."""
        op = routes.extract_event(
            self._anima(anima_id), event_type, content, session_id=session_id, role=role, author=author,
            occurred_at=occurred_at, meta=meta, importance_score=importance_score, summary=summary,
            source_uri=source_uri, dedupe_key=dedupe_key,
        )  # fmt: skip
        return self._run(op, timeout)

    def batch(
        self, events: Sequence[BatchItem], *, anima_id: str | UUID | None = None, timeout: float | None = None
    ) -> list[Event]:
        """Record many events in one request; returns them in request order.

        Items without ``anima_id`` get ``anima_id`` (or the client's default); items without
        ``dedupe_key`` get a fresh one.
        """
        default = str(anima_id) if anima_id else self._client.anima_id
        return self._run(routes.batch_events(events, default), timeout)

    def get(self, event_id: str | UUID, *, timeout: float | None = None) -> Event:
        """Fetch one event."""
        return self._run(routes.get_event(event_id), timeout)

    def list(
        self,
        anima_id: str | UUID | None = None,
        *,
        session_id: str | None = None,
        event_type: str | EventType | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int | None = None,
        timeout: float | None = None,
    ) -> SyncPager[Event]:
        """Events in chronological order, fetched ``limit`` per page as you iterate.

        Filters: the anima (default: the client's; with neither, every anima of the org), session,
        type, and ``since <= occurred_at < until``.
        """
        aid = str(anima_id) if anima_id else self._client.anima_id
        op = routes.list_events(
            aid, session_id=session_id, event_type=event_type, since=since, until=until, limit=limit
        )
        return self._pager(op, timeout)


class AsyncEvents(AsyncResource):
    """``/api/events`` (async)."""

    async def extract(
        self,
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
        summary: str | None = None,
        source_uri: str | None = None,
        dedupe_key: str | None = None,
        timeout: float | None = None,
    ) -> Event:
        """Record one event. A ``dedupe_key`` (uuid4 hex unless given) makes retries create it once."""
        op = routes.extract_event(
            self._anima(anima_id), event_type, content, session_id=session_id, role=role, author=author,
            occurred_at=occurred_at, meta=meta, importance_score=importance_score, summary=summary,
            source_uri=source_uri, dedupe_key=dedupe_key,
        )  # fmt: skip
        return await self._run(op, timeout)

    async def batch(
        self, events: Sequence[BatchItem], *, anima_id: str | UUID | None = None, timeout: float | None = None
    ) -> list[Event]:
        """Record many events in one request; returns them in request order."""
        default = str(anima_id) if anima_id else self._client.anima_id
        return await self._run(routes.batch_events(events, default), timeout)

    async def get(self, event_id: str | UUID, *, timeout: float | None = None) -> Event:
        """Fetch one event."""
        return await self._run(routes.get_event(event_id), timeout)

    def list(
        self,
        anima_id: str | UUID | None = None,
        *,
        session_id: str | None = None,
        event_type: str | EventType | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int | None = None,
        timeout: float | None = None,
    ) -> AsyncPager[Event]:
        """Events in chronological order (filters as in the sync client); iterate with ``async for``."""
        aid = str(anima_id) if anima_id else self._client.anima_id
        op = routes.list_events(
            aid, session_id=session_id, event_type=event_type, since=since, until=until, limit=limit
        )
        return self._pager(op, timeout)
