"""Per-process pack state: the snapshot LRU, its counters, in-flight compiles and the recall batcher."""

from __future__ import annotations

import asyncio
from typing import Any

from elephantasm.services.packs.cache import CachedPack, CacheMetrics, SnapshotLRU
from elephantasm.services.packs.recalls import RecallBatcher

DEFAULT_CACHE_BYTES = 64 * 1024 * 1024


class PackState:
    """Everything about packs that lives as long as the process (owned by the Runtime)."""

    def __init__(self, cache_bytes: int = DEFAULT_CACHE_BYTES, recall_interval_seconds: float = 1.0) -> None:
        self.lru = SnapshotLRU(cache_bytes)
        self.metrics = CacheMetrics()
        self.recalls = RecallBatcher(recall_interval_seconds)
        # key → the compile already running for it: concurrent misses wait for one compile.
        self.inflight: dict[str, asyncio.Future[CachedPack]] = {}

    def health(self) -> dict[str, Any]:
        """Counters for ``/api/health`` (``pack_cache``)."""
        return self.metrics.snapshot(self.lru) | {
            "recalls_pending": self.recalls.pending,
            "recalls_written": self.recalls.written,
        }

    async def aclose(self) -> None:
        """Write pending recalls and stop the batcher (called by ``Runtime.close``)."""
        await self.recalls.aclose()
