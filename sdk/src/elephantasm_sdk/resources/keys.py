"""API keys of the caller's organisation (thin wrapper)."""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from .._core import routes_curated as r
from ..models import ApiKey
from ._base import AsyncResource, SyncResource


class Keys(SyncResource):
    """``/api/keys``."""

    def create(
        self, name: str | None = None, *, expires_at: datetime | None = None, scope: str | None = None
    ) -> ApiKey:
        """Create a key (``scope``: admin, write or read); its secret ``key`` is only returned now."""
        return self._run(r.create_key(name, expires_at, scope))

    def revoke(self, key_id: str | UUID) -> None:
        """Revoke a key."""
        return self._run(r.revoke_key(key_id))

    def list(self) -> list[ApiKey]:
        """The organisation's keys (metadata only)."""
        return self._run(r.list_keys())


class AsyncKeys(AsyncResource):
    """``/api/keys`` (async)."""

    async def create(
        self, name: str | None = None, *, expires_at: datetime | None = None, scope: str | None = None
    ) -> ApiKey:
        """Create a key (``scope``: admin, write or read); its secret ``key`` is only returned now."""
        return await self._run(r.create_key(name, expires_at, scope))

    async def revoke(self, key_id: str | UUID) -> None:
        """Revoke a key."""
        return await self._run(r.revoke_key(key_id))

    async def list(self) -> list[ApiKey]:
        """The organisation's keys (metadata only)."""
        return await self._run(r.list_keys())
