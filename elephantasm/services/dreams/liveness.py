"""Whether a running dream run's process is still there: its run lock.

The process executing a run holds a session-level advisory lock keyed by the run's id on a
connection of its own; Postgres frees it when that connection ends, so a run whose process died
is found at once (:func:`gone_runs`) instead of after ``dreamer_stale_seconds`` of silence.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import uuid
from contextlib import suppress
from typing import Any

from sqlalchemy import BigInteger, Select, func, literal, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession

log = logging.getLogger(__name__)

_NAMESPACE = b"elephantasm.dream-run:"


def advisory(fn: Any, key: int) -> Select[Any]:
    """``SELECT fn(key)`` for one of Postgres's advisory-lock functions of a 64-bit key."""
    return select(fn(literal(key, BigInteger)))


def lock_key(namespace: bytes, entity_id: uuid.UUID) -> int:
    """The signed 64-bit advisory-lock key of an anima or a run: stable across processes and
    versions, and never the same for two namespaces."""
    return int.from_bytes(hashlib.blake2b(namespace + entity_id.bytes, digest_size=8).digest(), "big", signed=True)


def run_lock_key(run_id: uuid.UUID) -> int:
    """The advisory-lock key of a run's liveness lock."""
    return lock_key(_NAMESPACE, run_id)


class RunLocks:
    """The run locks this process holds: one connection each, taken before the run starts."""

    def __init__(self) -> None:
        self._held: dict[uuid.UUID, AsyncConnection] = {}

    async def take(self, pool: AsyncEngine, run_id: uuid.UUID) -> None:
        """Hold ``run_id``'s lock, on a connection of ``pool``, until :meth:`release` (or until this process ends)."""
        conn = await pool.connect()
        try:
            conn = await conn.execution_options(isolation_level="AUTOCOMMIT")  # no transaction left open
            await conn.execute(advisory(func.pg_advisory_lock, run_lock_key(run_id)))
        except BaseException:
            await conn.close()
            raise
        self._held[run_id] = conn

    async def release(self, run_id: uuid.UUID) -> None:
        """Let the run's lock go (a no-op for a run this process does not hold)."""
        conn = self._held.pop(run_id, None)
        if conn is None:
            return
        try:
            await asyncio.shield(conn.execute(advisory(func.pg_advisory_unlock, run_lock_key(run_id))))
        except Exception as exc:  # the connection is gone, and the lock with it
            log.debug("run lock %s: unlock failed (%s); dropping its connection", run_id, exc)
            await conn.invalidate()
        finally:
            with suppress(Exception):
                await conn.close()

    async def close(self) -> None:
        """Release every lock still held (process shutdown)."""
        for run_id in list(self._held):
            await self.release(run_id)


async def gone_runs(session: AsyncSession, run_ids: list[uuid.UUID]) -> list[uuid.UUID]:
    """Those of ``run_ids`` whose process is gone: their run lock is free. (Probing takes the lock
    until the caller's transaction ends, so a prober never mistakes another prober for a run.)"""
    gone = []
    for run_id in run_ids:
        if (await session.execute(advisory(func.pg_try_advisory_xact_lock, run_lock_key(run_id)))).scalar_one():
            gone.append(run_id)
    return gone
