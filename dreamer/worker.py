"""``elephantasm dreamer``: the scheduler alone, until SIGINT, SIGTERM or SIGHUP."""

from __future__ import annotations

import asyncio
import contextlib
import signal

from elephantasm.runtime import Runtime


async def run_worker(runtime: Runtime, stop: asyncio.Event | None = None) -> None:
    """Run the dreamer's jobs until ``stop`` is set (or the process is asked to terminate).

    On the way out, runs still in progress are cancelled: each records itself as failed and
    releases its claims, so their events are distilled by the next run, here or elsewhere.
    """
    from dreamer.scheduler import scheduler_lifespan

    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(NotImplementedError, RuntimeError):  # not the main thread, or not supported
            loop.add_signal_handler(sig, stop.set)
    async with scheduler_lifespan(runtime):
        await stop.wait()
