"""Recording recalls off the request path: being served in a pack counts as a recall (docs/design.md §5).

Serving only notes memory ids in memory; a background task writes them about once a second in
one statement per ``as_of`` bucket. A memory counts at most one recall per bucket (here and, for
other replicas, in the upsert's condition), so an agent polling ``inject`` in a loop does not
inflate its spaced-repetition strength.

Recalls deliberately do not bump ``state_version``: they only move time-based factors, which
change packs at the next ``as_of`` bucket anyway; bumping it would invalidate the cache on every
served pack.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from elephantasm.logsafe import safe_traceback

log = logging.getLogger(__name__)

# Recall state lives in ``memory_recalls``, not in the memory row: an upsert of a
# narrow row whose updated columns no index holds stays HOT, where the memory row's update wrote
# a new ~2.5 kB version and a new entry in every index of memories. Rows are read through the
# memories they belong to: a memory deleted since it was served is skipped, and org/anima are its.
_RECORD_SQL = text("""
INSERT INTO memory_recalls AS mr (memory_id, org_id, anima_id, recall_count, last_recalled_at)
SELECT m.id, m.org_id, m.anima_id, 1, r.at
FROM unnest(CAST(:ids AS uuid[]), CAST(:ats AS timestamptz[])) AS r(id, at) JOIN memories m ON m.id = r.id
ORDER BY m.id
ON CONFLICT (memory_id) DO UPDATE
SET recall_count = mr.recall_count + 1,
    last_recalled_at = greatest(coalesce(mr.last_recalled_at, excluded.last_recalled_at), excluded.last_recalled_at)
WHERE mr.last_recalled_at IS NULL OR mr.last_recalled_at < :bucket
""")


class RecallBatcher:
    """Collects served memory ids and writes them in batches (see module doc)."""

    def __init__(self, interval_seconds: float = 1.0) -> None:
        self.interval = interval_seconds
        self.written = 0
        self.batches = 0
        self._pending: dict[datetime, dict[uuid.UUID, datetime]] = {}
        self._counted: dict[datetime, set[uuid.UUID]] = {}
        self._engine: AsyncEngine | None = None
        self._task: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()

    @property
    def pending(self) -> int:
        """Recalls noted but not yet written."""
        return sum(len(ids) for ids in self._pending.values())

    def record(self, engine: AsyncEngine, memory_ids: Iterable[uuid.UUID], bucket: datetime, at: datetime) -> None:
        """Note that ``memory_ids`` were served at ``at`` (in the ``as_of`` bucket ``bucket``). Never blocks."""
        counted = self._counted.setdefault(bucket, set())
        fresh = [m for m in memory_ids if m not in counted]
        if not fresh:
            return
        self._engine = engine
        pending = self._pending.setdefault(bucket, {})
        for m in fresh:
            counted.add(m)
            pending[m] = max(at, pending.get(m, at))
        if len(self._counted) > 2:  # only the current and the previous bucket can still repeat
            for old in sorted(self._counted)[:-2]:
                del self._counted[old]
        self._ensure_running()

    def _ensure_running(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run(), name="elephantasm-recalls")

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            try:
                await self.flush()
            except Exception as exc:
                log.error("recording pack recalls failed: %s", safe_traceback(exc))

    async def flush(self) -> int:
        """Write everything noted so far now; returns how many memory recalls were written."""
        async with self._lock:
            batches, self._pending = self._pending, {}
            if not batches or self._engine is None:
                return 0
            written = 0
            async with self._engine.begin() as conn:
                for bucket, served in sorted(batches.items()):
                    ids = sorted(served)
                    params = {"ids": ids, "ats": [served[m] for m in ids], "bucket": bucket}
                    written += (await conn.execute(_RECORD_SQL, params)).rowcount
            self.written += written
            self.batches += 1
            return written

    async def aclose(self) -> None:
        """Stop the background task and write what is left."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, RuntimeError):
                await self._task
            self._task = None
        try:
            await self.flush()
        except Exception as exc:
            log.error("recording pack recalls at shutdown failed: %s", safe_traceback(exc))
