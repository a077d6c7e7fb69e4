"""Stopping the scheduler while its jobs run: a job that ends within the grace ends normally, one
still blocked after it is cancelled quietly, and neither is logged as a failed job with a traceback
(a deployment's shutdown log then reads as a failure; CI's two-worker test caught exactly that)."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from dreamer import scheduler as scheduler_module
from dreamer.scheduler import scheduler_lifespan
from elephantasm.runtime import Runtime
from elephantasm.settings import Settings
from tests.dreams.helpers import variant
from tests.support.databases import connect, own_runtime


async def _blocked_on_lock(pg_url: str) -> int:
    """Sessions of this database waiting for a lock (the dreamer's reads behind our LOCK TABLE)."""
    conn = await connect(pg_url)
    try:
        return await conn.fetchval(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
    finally:
        await conn.close()


async def _stop_with_jobs_blocked(pg_url: str, settings: Settings, release_after: float | None) -> None:
    """Start the scheduler with ``events`` locked so both jobs block in Postgres, then stop it;
    the lock is released after ``release_after`` seconds of the stop (never, if None). On a database
    of its own: the jobs look at every anima, and the lock must not hold up anything else."""
    async with own_runtime(pg_url, settings, "shutdown") as runtime:
        await _stop_with_jobs_blocked_on(runtime, release_after)


async def _stop_with_jobs_blocked_on(runtime: Runtime, release_after: float | None) -> None:
    rt = variant(runtime, dreamer_poll_seconds=0.1)
    url = runtime.database_url
    # The jobs run on the background pool: open its two connections now, so that no job is still
    # connecting (and the 0.1 s poll skipping a tick, with a warning) when the test looks.
    warm = [await rt.background.engine.connect() for _ in range(2)]
    for conn in warm:
        await conn.close()
    holder = await connect(url)
    tx = holder.transaction()
    await tx.start()
    await holder.execute("LOCK TABLE events IN ACCESS EXCLUSIVE MODE")
    release: asyncio.Task[None] | None = None

    async def release_later(delay: float) -> None:
        await asyncio.sleep(delay)
        await tx.rollback()

    try:
        async with scheduler_lifespan(rt) as dreamer:
            deadline = time.monotonic() + 20
            while (len(dreamer._jobs) < 2 or await _blocked_on_lock(url) < 2) and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert len(dreamer._jobs) == 2, "the sweep and the threshold poll should both be waiting on the lock"
            if release_after is not None:
                release = asyncio.create_task(release_later(release_after))
        assert len(dreamer._jobs) == 0
    finally:
        await (release if release is not None else tx.rollback())
        await holder.close()


async def test_jobs_running_at_shutdown_finish_within_the_grace(
    pg_url: str, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    await _stop_with_jobs_blocked(pg_url, settings, release_after=0.3)
    assert "stopped by shutdown" not in caplog.text  # they ended on their own, not by cancellation
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text


async def test_jobs_still_blocked_after_the_grace_are_cancelled_quietly(
    pg_url: str, settings: Settings, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scheduler_module, "_JOB_GRACE_SECONDS", 0.3)
    caplog.set_level(logging.INFO)
    await _stop_with_jobs_blocked(pg_url, settings, release_after=None)
    assert caplog.text.count("stopped by shutdown") == 2, caplog.text
    assert "Traceback" not in caplog.text and "raised an exception" not in caplog.text, caplog.text
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text
