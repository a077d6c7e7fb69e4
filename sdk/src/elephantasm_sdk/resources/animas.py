"""Animas: the agents whose memory is kept."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from .._core import routes
from ..models import Anima
from ..pagination import AsyncPager, SyncPager
from ._base import AsyncResource, SyncResource


class Animas(SyncResource):
    """``/api/animas``."""

    def create(
        self,
        name: str,
        description: str | None = None,
        meta: dict[str, Any] | None = None,
        *,
        user_id: str | UUID | None = None,
        timeout: float | None = None,
    ) -> Anima:
        """Create an anima."""
        return self._run(routes.create_anima(name, description, meta, user_id), timeout)

    def get(self, anima_id: Any = None, *, timeout: float | None = None) -> Anima:
        """Fetch one anima (defaults to the client's anima)."""
        return self._run(routes.get_anima(self._anima(anima_id)), timeout)

    def update(
        self,
        anima_id: Any = None,
        *,
        name: str | None = None,
        description: str | None = None,
        meta: dict[str, Any] | None = None,
        user_id: str | UUID | None = None,
        timeout: float | None = None,
    ) -> Anima:
        """Change an anima's name, description, meta or user id (``None`` leaves a field as is)."""
        op = routes.update_anima(self._anima(anima_id), name=name, description=description, meta=meta, user_id=user_id)
        return self._run(op, timeout)

    def delete(self, anima_id: Any, *, timeout: float | None = None) -> None:
        """Delete an anima."""
        return self._run(routes.delete_anima(anima_id), timeout)

    def list(self, *, limit: int | None = None, timeout: float | None = None) -> SyncPager[Anima]:
        """Every anima of the organisation, fetched ``limit`` per page as you iterate."""
        return self._pager(routes.list_animas(limit=limit), timeout)


class AsyncAnimas(AsyncResource):
    """``/api/animas`` (async)."""

    async def create(
        self,
        name: str,
        description: str | None = None,
        meta: dict[str, Any] | None = None,
        *,
        user_id: str | UUID | None = None,
        timeout: float | None = None,
    ) -> Anima:
        """Create an anima."""
        return await self._run(routes.create_anima(name, description, meta, user_id), timeout)

    async def get(self, anima_id: Any = None, *, timeout: float | None = None) -> Anima:
        """Fetch one anima (defaults to the client's anima)."""
        return await self._run(routes.get_anima(self._anima(anima_id)), timeout)

    async def update(
        self,
        anima_id: Any = None,
        *,
        name: str | None = None,
        description: str | None = None,
        meta: dict[str, Any] | None = None,
        user_id: str | UUID | None = None,
        timeout: float | None = None,
    ) -> Anima:
        """Change an anima's name, description, meta or user id (``None`` leaves a field as is)."""
        op = routes.update_anima(self._anima(anima_id), name=name, description=description, meta=meta, user_id=user_id)
        return await self._run(op, timeout)

    async def delete(self, anima_id: Any, *, timeout: float | None = None) -> None:
        """Delete an anima."""
        return await self._run(routes.delete_anima(anima_id), timeout)

    def list(self, *, limit: int | None = None, timeout: float | None = None) -> AsyncPager[Anima]:
        """Every anima of the organisation; iterate with ``async for``."""
        return self._pager(routes.list_animas(limit=limit), timeout)
