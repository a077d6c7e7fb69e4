"""Scheduling: a periodic sweep, and a debounced trigger once an anima has enough new events.

APScheduler 3.x ``AsyncIOScheduler`` with its in-memory job store (its SQLAlchemy store is sync-only);
everything durable (runs, claims, heartbeats) lives in our own tables, so any number of dreamer
processes can run these jobs at once: the per-anima lease decides who dreams.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

from apscheduler.jobstores.memory import MemoryJobStore
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from elephantasm.domain.errors import ConflictError, NotFoundError
from elephantasm.runtime import Runtime
from elephantasm.services.dreams import execute_run, start_run
from elephantasm.services.dreams.claims import recover_stale_runs
from elephantasm.services.dreams.due import DueAnima, find_due_animas, find_sleepy_animas

log = logging.getLogger(__name__)

_JOB_GRACE_SECONDS = 5.0


class _QuietSkips(logging.Filter):
    """Drops APScheduler's warning that a job's tick was skipped because its previous run still goes:
    with ``max_instances=1`` that is the intended back-pressure (a slow poll, e.g. while the process
    starts up), and the next tick runs as usual."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "maximum number of running instances" not in str(record.msg)


_QUIET_SKIPS = _QuietSkips()


class Dreamer:
    """The jobs: find due animas and start runs for them, at most ``dreamer_concurrency`` at once."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._slots = asyncio.Semaphore(max(1, runtime.settings.dreamer_concurrency))
        self._active: set = set()
        self._jobs: set[asyncio.Task[Any]] = set()
        self._stopping = False

    async def run_job(self, job: Callable[[], Awaitable[int]]) -> int | None:
        """Run one scheduled job (``sweep`` or ``threshold``), tracked so shutdown can drain it.

        APScheduler cancels a coroutine job still running at ``shutdown`` and logs the cancellation
        as the job's failure, with a traceback. A job cancelled because the dreamer is stopping has
        not failed: it ends quietly, and whatever it had not started waits for the next process.
        """
        task = asyncio.current_task()
        assert task is not None  # APScheduler runs coroutine jobs as tasks
        self._jobs.add(task)
        try:
            return await job()
        except asyncio.CancelledError:
            if not self._stopping:
                raise
            log.info("dreamer job %s stopped by shutdown", getattr(job, "__name__", job))
            return None
        finally:
            self._jobs.discard(task)

    async def stop_jobs(self, grace: float) -> None:
        """Give running jobs up to ``grace`` seconds to end, then cancel what still runs and wait
        for it to unwind (a job's reads end with its connection returned to the pool)."""
        self._stopping = True
        if self._jobs:
            await asyncio.wait(list(self._jobs), timeout=grace)
        left = list(self._jobs)
        for task in left:
            task.cancel()
        if left:
            await asyncio.wait(left, timeout=grace)

    async def sweep(self) -> int:
        """Recover abandoned runs anywhere, dream every anima with pending events, and give animas
        idle for ``dreamer_sleep_hours`` a curation-only ("sleep") run so their memories still fade."""
        s, now = self.runtime.settings, self.runtime.clock()
        async with self.runtime.unit_of_work() as session:
            stale = await recover_stale_runs(session, now, timedelta(seconds=s.dreamer_stale_seconds))
        if stale:
            log.warning("released the claims of %d abandoned dream run(s)", len(stale))
        started = await self._dream(1, timedelta(0), "sweep")
        async with self.runtime.read_session() as session:
            sleepy = await find_sleepy_animas(session, now, timedelta(hours=s.dreamer_sleep_hours))
        return started + self._spawn(sleepy, "sleep")

    async def threshold(self) -> int:
        """Dream animas with ``dreamer_trigger_events`` pending events, once quiet for the debounce."""
        s = self.runtime.settings
        return await self._dream(s.dreamer_trigger_events, timedelta(seconds=s.dreamer_debounce_seconds), "threshold")

    async def _dream(self, min_pending: int, quiet: timedelta, trigger: str) -> int:
        s = self.runtime.settings
        async with self.runtime.read_session() as session:
            due = await find_due_animas(
                session,
                self.runtime.clock(),
                min_pending=min_pending,
                quiet=quiet,
                stale_after=timedelta(seconds=s.dreamer_stale_seconds),
            )
        return self._spawn(due, trigger)

    def _spawn(self, due: list[DueAnima], trigger: str) -> int:
        started = 0
        for item in due:
            if item.anima_id not in self._active:
                self._active.add(item.anima_id)
                self.runtime.dream_tasks.spawn(self._run(item, trigger), name=f"dream-{trigger}-{item.anima_id}")
                started += 1
        return started

    async def _run(self, item: DueAnima, trigger: str) -> None:
        try:
            async with self._slots:
                deps = self.runtime.dreams
                try:
                    run = await start_run(deps, item.org_id, item.anima_id, trigger)
                except (ConflictError, NotFoundError):
                    return  # another process got there first, or the anima was just deleted
                await execute_run(deps, run)
        finally:
            self._active.discard(item.anima_id)


def build_scheduler(dreamer: Dreamer) -> AsyncIOScheduler:
    """An in-memory scheduler with the sweep (first one right away) and the threshold poll."""
    s = dreamer.runtime.settings
    scheduler = AsyncIOScheduler(jobstores={"default": MemoryJobStore()}, timezone=UTC)
    logging.getLogger("apscheduler.scheduler").addFilter(_QUIET_SKIPS)
    common = {"max_instances": 1, "coalesce": True, "misfire_grace_time": None}
    # The sweep's first run is right away; the poll's is one interval in. (APScheduler reads an
    # explicit ``next_run_time=None`` as "paused", so the key is left out rather than set to None.)
    jobs = {
        "dream-sweep": (dreamer.sweep, s.dreamer_sweep_seconds, {"next_run_time": datetime.now(UTC)}),
        "dream-threshold": (dreamer.threshold, s.dreamer_poll_seconds, {}),
    }
    for name, (job, seconds, first) in jobs.items():
        scheduler.add_job(
            dreamer.run_job, "interval", args=(job,), seconds=seconds, id=name, name=name, **common, **first
        )
    return scheduler


@asynccontextmanager
async def scheduler_lifespan(runtime: Runtime) -> AsyncIterator[Dreamer]:
    """Run the dreamer's jobs for the duration of the block (the API's lifespan, or a worker); its
    runs use the runtime's background pool (long statement limits, see ``Runtime.background``)."""
    runtime = runtime.background
    dreamer = Dreamer(runtime)
    scheduler = build_scheduler(dreamer)
    scheduler.start()
    log.info(
        "dreamer scheduler started (sweep %ss, threshold %s events / %ss quiet)",
        runtime.settings.dreamer_sweep_seconds,
        runtime.settings.dreamer_trigger_events,
        runtime.settings.dreamer_debounce_seconds,
    )
    try:
        yield dreamer
    finally:
        # No new job starts; a sweep or poll already running is a few reads, so let it end rather
        # than cancel it mid-statement. Whatever is still running after the grace is cancelled
        # here, where it ends quietly, not by the scheduler's shutdown, which logs it as failed.
        scheduler.pause()
        await dreamer.stop_jobs(_JOB_GRACE_SECONDS)
        scheduler.shutdown(wait=False)
        await runtime.dream_tasks.close()
