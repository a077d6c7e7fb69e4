"""One dreamer scheduler per ``serve --workers N``: whoever holds a Postgres advisory lock.

Every worker contends for the group's session-level lock; the holder runs the scheduler. When it
dies its connection closes, the lock is freed and another worker takes over. (Per-anima leases
already keep schedulers from duplicating work; this keeps to one scheduler, as users expect.)
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

from sqlalchemy import func

from elephantasm.runtime import Runtime
from elephantasm.services.dreams.liveness import advisory

log = logging.getLogger(__name__)

RETRY_SECONDS = 5.0


def lock_key(group: str) -> int:
    """The signed 64-bit advisory-lock key of a worker group."""
    digest = hashlib.sha256(f"elephantasm-scheduler:{group}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


async def _lead(runtime: Runtime, key: int, retry_seconds: float) -> None:
    """Contend for the lock until cancelled; a lost database connection means contending again."""
    while True:
        try:
            await _lead_once(runtime, key, retry_seconds)
        except Exception:
            log.warning("dreamer leadership lost or not reachable; retrying in %ss", retry_seconds, exc_info=True)
            await asyncio.sleep(retry_seconds)


async def _lead_once(runtime: Runtime, key: int, retry_seconds: float) -> None:
    """Wait for the lock, then run the scheduler until cancelled (the lock goes with the connection)."""
    from dreamer.scheduler import scheduler_lifespan

    async with runtime.engine.connect() as conn:
        conn = await conn.execution_options(isolation_level="AUTOCOMMIT")  # no transaction left open
        while not (await conn.execute(advisory(func.pg_try_advisory_lock, key))).scalar_one():
            await asyncio.sleep(retry_seconds)
        log.debug("this worker leads the dreamer scheduler (lock %s)", key)
        try:
            async with scheduler_lifespan(runtime):
                await asyncio.Event().wait()
        finally:
            with suppress(Exception):  # the connection may already be gone; closing it frees the lock
                await asyncio.shield(conn.execute(advisory(func.pg_advisory_unlock, key)))


@asynccontextmanager
async def leader_scheduler(runtime: Runtime, group: str, retry_seconds: float = RETRY_SECONDS) -> AsyncIterator[None]:
    """For the block's duration, run the scheduler here if this process wins the group's lock."""
    task = asyncio.create_task(_lead(runtime, lock_key(group), retry_seconds), name="dreamer-leader")
    try:
        yield
    finally:
        task.cancel()
        with suppress(asyncio.CancelledError):
            await task
