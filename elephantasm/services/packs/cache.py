"""The pack snapshot cache (docs/design.md §7): an in-process LRU bounded in bytes over a Postgres table
shared by every replica (``pack_snapshots``), plus the counters ``/api/health`` reports.

Keys contain the anima's ``state_version`` (see :mod:`.keys`), which every pack-changing write
bumps in its own transaction; a request reads the current version first, so a stale snapshot is
simply never asked for. Entries hold the serialised JSON, so a hit costs no re-serialisation.
"""

from __future__ import annotations

import statistics
import uuid
from collections import OrderedDict, deque
from dataclasses import dataclass, replace
from typing import Any

from elephantasm.domain.content_coding import gzip_bytes

# Bookkeeping bytes charged per entry on top of its body (key, ids, object headers).
_ENTRY_OVERHEAD = 512


@dataclass(frozen=True, slots=True)
class CachedPack:
    """A served pack as bytes, with what a hit needs (ETag, recalls to record)."""

    key: str
    body: bytes
    fingerprint: str
    pack_id: uuid.UUID
    memory_ids: tuple[uuid.UUID, ...]
    gzipped: bytes | None = None
    """``body`` gzipped, made on the first hit from a gzip-accepting client (see :meth:`SnapshotLRU.gzip_body`)."""

    @property
    def size(self) -> int:
        """Approximate bytes this entry holds."""
        extra = len(self.gzipped) if self.gzipped is not None else 0
        return len(self.body) + extra + len(self.key) + 16 * len(self.memory_ids) + _ENTRY_OVERHEAD

    @classmethod
    def from_payload(cls, key: str, payload: dict[str, Any]) -> CachedPack:
        """From the shared tier's JSON (written by ``store._PERSIST``): ``body`` (the pack's JSON as a
        string, so every replica serves the same bytes), ``fingerprint``, ``pack_id``, ``memory_ids``."""
        return cls(
            key,
            payload["body"].encode(),
            payload["fingerprint"],
            uuid.UUID(payload["pack_id"]),
            tuple(uuid.UUID(m) for m in payload["memory_ids"]),
        )


class SnapshotLRU:
    """Least-recently-used map of key → :class:`CachedPack`, bounded by total bytes."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max(0, max_bytes)
        self.bytes = 0
        self.evictions = 0
        self.discards = 0
        """Bumped by :meth:`discard_mentioning`: an entry read before a bump may hold what it dropped."""
        self._entries: OrderedDict[str, CachedPack] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str) -> CachedPack | None:
        """The entry for ``key`` (now most recently used), or None."""
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
        return entry

    def put(self, entry: CachedPack) -> None:
        """Insert or replace; evicts the least recently used until within budget."""
        if entry.size > self.max_bytes:
            return  # larger than the whole cache: serving it uncached is the only sane option
        old = self._entries.pop(entry.key, None)
        if old is not None:
            self.bytes -= old.size
        self._entries[entry.key] = entry
        self.bytes += entry.size
        while self.bytes > self.max_bytes:
            _, evicted = self._entries.popitem(last=False)
            self.bytes -= evicted.size
            self.evictions += 1

    def gzip_body(self, entry: CachedPack) -> bytes:
        """``entry``'s body gzipped, compressed once: the entry with its copy replaces the cached one."""
        if entry.gzipped is not None:
            return entry.gzipped
        body = gzip_bytes(entry.body)
        if self._entries.get(entry.key) is entry:
            self.put(replace(entry, gzipped=body))
        return body

    def discard_mentioning(self, needles: list[bytes]) -> int:
        """Drop every entry whose body contains any of ``needles`` (forgotten ids); returns how many."""
        self.discards += 1
        doomed = [k for k, e in self._entries.items() if any(n in e.body for n in needles)]
        for key in doomed:
            self.bytes -= self._entries.pop(key).size
        return len(doomed)

    def clear(self) -> None:
        """Drop every entry (tests use it to force the shared tier or a compile)."""
        self._entries.clear()
        self.bytes = 0


class CacheMetrics:
    """Hit/miss counters and recent compile times."""

    def __init__(self, window: int = 1000) -> None:
        self.memory_hits = 0
        self.shared_hits = 0
        self.misses = 0
        self.not_modified = 0
        self.compile_ms: deque[float] = deque(maxlen=window)
        self.compiles = 0

    def record_compile(self, ms: float) -> None:
        """Count one compile of ``ms`` milliseconds."""
        self.compiles += 1
        self.compile_ms.append(ms)

    def snapshot(self, lru: SnapshotLRU) -> dict[str, Any]:
        """JSON-ready counters (compile percentiles over the last ``window`` compiles)."""
        times = sorted(self.compile_ms)
        lookups = self.memory_hits + self.shared_hits + self.misses

        def pct(p: float) -> float | None:
            return round(times[min(len(times) - 1, int(p * len(times)))], 3) if times else None

        return {
            "hits": self.memory_hits + self.shared_hits,
            "memory_hits": self.memory_hits,
            "shared_hits": self.shared_hits,
            "misses": self.misses,
            "not_modified": self.not_modified,
            "hit_ratio": round((self.memory_hits + self.shared_hits) / lookups, 4) if lookups else None,
            "compiles": self.compiles,
            "compile_ms_p50": pct(0.5),
            "compile_ms_p99": pct(0.99),
            "compile_ms_mean": round(statistics.fmean(times), 3) if times else None,
            "entries": len(lru),
            "bytes": lru.bytes,
            "max_bytes": lru.max_bytes,
            "evictions": lru.evictions,
        }


# asyncpg placeholders: looked up on the driver connection (``elephantasm.db.raw``), one round
# trip with no transaction around it (through SQLAlchemy: BEGIN, SELECT, ROLLBACK). The pool's
# connections decode jsonb with the engine's JSON deserializer.
_LOAD_SQL = "SELECT payload FROM pack_snapshots WHERE cache_key = $1 AND org_id = $2 AND anima_id = $3"


async def load_shared(driver: Any, key: str, org_id: uuid.UUID, anima_id: uuid.UUID) -> CachedPack | None:
    """The shared tier's snapshot for ``key`` of the org's anima, or None (``driver``: an asyncpg
    connection, see :func:`elephantasm.db.raw.driver_connection`)."""
    payload = await driver.fetchval(_LOAD_SQL, key, org_id, anima_id)
    return None if payload is None else CachedPack.from_payload(key, payload)
