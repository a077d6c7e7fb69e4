"""Memory packs: ``inject`` fetches the pack to put into a prompt."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from .._core.packs import PackKey, compile_pack, latest_pack
from ..models import MemoryPack
from ._base import AsyncResource, SyncResource


class Packs(SyncResource):
    """``/api/animas/{id}/memory-packs`` and ``/api/packs``."""

    def inject(
        self,
        anima_id: str | UUID | None = None,
        query: str | None = None,
        preset: str | None = None,
        max_tokens: int | None = None,
        encoding: str | None = None,
        *,
        conditional: bool = True,
        timeout: float | None = None,
    ) -> MemoryPack | None:
        """The latest memory pack for an anima, or None if it has nothing recorded yet.

        With ``conditional`` (the default) a repeat call for the same arguments sends the last
        pack's ETag; when the server answers 304 the cached pack is returned without a new body.
        """
        key = PackKey(self._anima(anima_id), query, preset, max_tokens, encoding)
        cache = self._client._pack_cache
        result = self._run(latest_pack(key, cache.get(key) if conditional else None), timeout)
        cache.remember(key, result)
        return result.pack

    def compile(
        self,
        anima_id: str | UUID | None = None,
        query: str | None = None,
        preset: str | None = None,
        max_tokens: int | None = None,
        encoding: str | None = None,
        *,
        timeout: float | None = None,
        **options: Any,
    ) -> MemoryPack:
        """Compile a pack now (``POST /api/packs/compile``); extra ``options`` go into the body."""
        op = compile_pack(
            self._anima(anima_id), query=query, preset=preset, max_tokens=max_tokens, encoding=encoding, **options
        )
        return self._run(op, timeout)


class AsyncPacks(AsyncResource):
    """``/api/animas/{id}/memory-packs`` and ``/api/packs`` (async)."""

    async def inject(
        self,
        anima_id: str | UUID | None = None,
        query: str | None = None,
        preset: str | None = None,
        max_tokens: int | None = None,
        encoding: str | None = None,
        *,
        conditional: bool = True,
        timeout: float | None = None,
    ) -> MemoryPack | None:
        """The latest memory pack for an anima, or None if it has nothing recorded yet.

        With ``conditional`` (the default) a repeat call reuses the cached pack on 304.
        """
        key = PackKey(self._anima(anima_id), query, preset, max_tokens, encoding)
        cache = self._client._pack_cache
        result = await self._run(latest_pack(key, cache.get(key) if conditional else None), timeout)
        cache.remember(key, result)
        return result.pack

    async def compile(
        self,
        anima_id: str | UUID | None = None,
        query: str | None = None,
        preset: str | None = None,
        max_tokens: int | None = None,
        encoding: str | None = None,
        *,
        timeout: float | None = None,
        **options: Any,
    ) -> MemoryPack:
        """Compile a pack now (``POST /api/packs/compile``); extra ``options`` go into the body."""
        op = compile_pack(
            self._anima(anima_id), query=query, preset=preset, max_tokens=max_tokens, encoding=encoding, **options
        )
        return await self._run(op, timeout)
