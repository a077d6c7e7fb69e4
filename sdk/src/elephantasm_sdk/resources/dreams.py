"""Dreams: background runs that distil events into memories, knowledge and identity."""

from __future__ import annotations

import asyncio
import time
from uuid import UUID

from .._core import routes_curated as r
from ..exceptions import DreamTimeoutError
from ..models import DreamRun
from ..pagination import AsyncPager, SyncPager
from ._base import AsyncResource, SyncResource

Id = str | UUID


def _run_id(run: Id | DreamRun) -> str:
    return str(run.id) if isinstance(run, DreamRun) else str(run)


def _timed_out(run: DreamRun, timeout: float) -> DreamTimeoutError:
    return DreamTimeoutError(f"Dream run {run.id} still {run.status!r} after {timeout:g}s")


class Dreams(SyncResource):
    """``/api/dreams``."""

    def trigger(self, anima_id: Id | None = None, *, timeout: float | None = None) -> DreamRun:
        """Start a dream run now. Raises ConflictError (409) if one is already running."""
        return self._run(r.trigger_dream(self._anima(anima_id)), timeout)

    def get(self, run_id: Id | DreamRun, *, timeout: float | None = None) -> DreamRun:
        """Fetch one dream run (session)."""
        return self._run(r.get_dream_session(_run_id(run_id)), timeout)

    def wait(self, run_id: Id | DreamRun, timeout: float = 300.0, *, poll_interval: float = 1.0) -> DreamRun:
        """Poll until the run is ``completed`` or ``failed``; raise DreamTimeoutError after ``timeout``s."""
        deadline = time.monotonic() + timeout
        while True:
            run = self.get(run_id)
            if run.is_finished:
                return run
            delay = r.poll_delay(deadline - time.monotonic(), poll_interval)
            if delay is None:
                raise _timed_out(run, timeout)
            time.sleep(delay)

    def list(
        self, *, anima_id: Id | None = None, status: str | None = None, limit: int | None = None,
        timeout: float | None = None,
    ) -> SyncPager[DreamRun]:  # fmt: skip
        """Dream runs, newest first, optionally of one anima or status; paged lazily."""
        aid = str(anima_id) if anima_id else None
        return self._pager(r.list_dream_sessions(aid, status, limit), timeout)


class AsyncDreams(AsyncResource):
    """``/api/dreams`` (async)."""

    async def trigger(self, anima_id: Id | None = None, *, timeout: float | None = None) -> DreamRun:
        """Start a dream run now. Raises ConflictError (409) if one is already running."""
        return await self._run(r.trigger_dream(self._anima(anima_id)), timeout)

    async def get(self, run_id: Id | DreamRun, *, timeout: float | None = None) -> DreamRun:
        """Fetch one dream run (session)."""
        return await self._run(r.get_dream_session(_run_id(run_id)), timeout)

    async def wait(self, run_id: Id | DreamRun, timeout: float = 300.0, *, poll_interval: float = 1.0) -> DreamRun:
        """Poll until the run is ``completed`` or ``failed``; raise DreamTimeoutError after ``timeout``s."""
        deadline = time.monotonic() + timeout
        while True:
            run = await self.get(run_id)
            if run.is_finished:
                return run
            delay = r.poll_delay(deadline - time.monotonic(), poll_interval)
            if delay is None:
                raise _timed_out(run, timeout)
            await asyncio.sleep(delay)

    def list(
        self, *, anima_id: Id | None = None, status: str | None = None, limit: int | None = None,
        timeout: float | None = None,
    ) -> AsyncPager[DreamRun]:  # fmt: skip
        """Dream runs, optionally of one anima or status; iterate with ``async for``."""
        aid = str(anima_id) if anima_id else None
        return self._pager(r.list_dream_sessions(aid, status, limit), timeout)
