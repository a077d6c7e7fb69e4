"""Identity: an anima's evolving self-description, with versioned history."""

from __future__ import annotations

from uuid import UUID

from .._core import routes_curated as r
from ..models import Identity, IdentityVersion
from ._base import AsyncResource, SyncResource

Id = str | UUID


class IdentityResource(SyncResource):
    """``/api/identities/anima/{id}``."""

    def get(self, anima_id: Id | None = None, *, timeout: float | None = None) -> Identity:
        """The anima's current identity."""
        return self._run(r.get_identity(self._anima(anima_id)), timeout)

    def history(self, anima_id: Id | None = None, *, timeout: float | None = None) -> list[IdentityVersion]:
        """Every past version, with the reason each changed."""
        return self._run(r.identity_history(self._anima(anima_id)), timeout)

    def restore(self, version: int, *, anima_id: Id | None = None, timeout: float | None = None) -> Identity:
        """Make an earlier version current again (recorded as a new version)."""
        return self._run(r.restore_identity(self._anima(anima_id), version), timeout)


class AsyncIdentityResource(AsyncResource):
    """``/api/identities/anima/{id}`` (async)."""

    async def get(self, anima_id: Id | None = None, *, timeout: float | None = None) -> Identity:
        """The anima's current identity."""
        return await self._run(r.get_identity(self._anima(anima_id)), timeout)

    async def history(self, anima_id: Id | None = None, *, timeout: float | None = None) -> list[IdentityVersion]:
        """Every past version, with the reason each changed."""
        return await self._run(r.identity_history(self._anima(anima_id)), timeout)

    async def restore(self, version: int, *, anima_id: Id | None = None, timeout: float | None = None) -> Identity:
        """Make an earlier version current again (recorded as a new version)."""
        return await self._run(r.restore_identity(self._anima(anima_id), version), timeout)
