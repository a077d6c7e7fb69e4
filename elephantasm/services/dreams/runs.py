"""The dream-run lease: start (at most one live run per anima), heartbeat, progress, finish."""

from __future__ import annotations

import os
import socket
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from elephantasm.db.models import Anima, DreamRun
from elephantasm.db.tables import rowcount, table_of
from elephantasm.domain.dreaming import Usage
from elephantasm.domain.errors import ConflictError
from elephantasm.ids import uuid7
from elephantasm.services.animas import get_anima
from elephantasm.services.dreams.claims import lock_anima, recover_stale_runs, release_claims, watermark
from elephantasm.services.dreams.deps import DreamDeps, DreamLimits
from elephantasm.services.dreams.liveness import gone_runs

_RUNS = table_of(DreamRun)
WORKER_ID = f"{socket.gethostname()}:{os.getpid()}"


PURGED = "the anima was purged during the run"


class RunLostError(RuntimeError):
    """The run is no longer the live lease holder (declared abandoned, or its claims were taken)."""


@dataclass
class RunStats:
    """What a run has done so far; written to its journal row at every step."""

    events_read: int = 0
    memories_created: int = 0
    knowledge_created: int = 0
    usage: Usage = Usage()
    counts: Counter[str] = field(default_factory=Counter)
    timings: dict[str, float] = field(default_factory=dict)

    def time(self, phase: str, seconds: float) -> None:
        """Add ``seconds`` to a phase's wall-clock total."""
        self.timings[phase] = round(self.timings.get(phase, 0.0) + seconds, 4)

    def columns(self) -> dict[str, Any]:
        """The dream_runs columns this describes."""
        return {
            "events_read": self.events_read,
            "memories_created": self.memories_created,
            "knowledge_created": self.knowledge_created,
            "llm_calls": self.usage.calls,
            "prompt_tokens": self.usage.prompt_tokens,
            "completion_tokens": self.usage.completion_tokens,
            "counts": {**dict(sorted(self.counts.items())), "timings": dict(sorted(self.timings.items()))},
        }


async def start_run(deps: DreamDeps, org_id: uuid.UUID, anima_id: uuid.UUID, trigger: str) -> DreamRun:
    """Take the anima's dream lease and return the new ``running`` run.

    Raises NotFoundError for an unknown (or another org's) anima and ConflictError when a live run
    already holds the lease. Abandoned runs of the anima (their process gone, or silent for
    ``dreamer_stale_seconds``) are failed and their claims released first. This process holds the
    new run's lock (``liveness.py``) until :func:`execute_run` ends it.
    """
    run_id = uuid7()
    locks = deps.tasks.run_locks
    await locks.take(deps.pool, run_id)  # before the row is visible: a live run always holds its lock
    try:
        return await _start(deps, run_id, org_id, anima_id, trigger)
    except BaseException:
        await locks.release(run_id)
        raise


async def _start(deps: DreamDeps, run_id: uuid.UUID, org_id: uuid.UUID, anima_id: uuid.UUID, trigger: str) -> DreamRun:
    now, engine = deps.clock(), deps.distiller
    async with deps.unit_of_work() as session:
        await get_anima(session, org_id, anima_id)
        await lock_anima(session, anima_id)
        await recover_stale_runs(session, now, timedelta(seconds=deps.limits.dreamer_stale_seconds), anima_id)
        live = select(_RUNS.c.id).where(_RUNS.c.anima_id == anima_id, _RUNS.c.status == "running")
        running = list((await session.execute(live)).scalars())
        gone = await gone_runs(session, running)
        await fail_runs(session, gone, now, "abandoned: its process is gone; its claims were released")
        alive = [r for r in running if r not in gone]
        if alive:
            raise ConflictError(f"a dream run ({alive[0]}) is already running for anima {anima_id}")
        # Every seq up to the anima's event_seq read here is committed (seqs are handed out under
        # the anima's row lock): the run distils up to it, events recorded later wait.
        _, until_seq = await watermark(session, anima_id)
        run = DreamRun(
            id=run_id,
            org_id=org_id,
            anima_id=anima_id,
            status="running",
            trigger=trigger,
            engine=engine.name,
            model=engine.model,
            worker_id=WORKER_ID,
            started_at=now,
            heartbeat_at=now,
            until_seq=until_seq,
        )
        session.add(run)
        await session.flush()
    return run


async def fail_runs(session: AsyncSession, run_ids: list[uuid.UUID], now: Any, error: str) -> None:
    """Fail these running runs with ``error`` and release their claims."""
    if not run_ids:
        return
    await session.execute(
        update(_RUNS)
        .where(_RUNS.c.id.in_(run_ids), _RUNS.c.status == "running")
        .values(status="failed", finished_at=now, error=error)
    )
    await release_claims(session, run_ids)


async def heartbeat(deps: DreamDeps, run_id: uuid.UUID) -> bool:
    """Prove the run is alive; False when it is no longer running (it must stop)."""
    async with deps.unit_of_work() as session:
        result = await session.execute(
            update(_RUNS).where(_RUNS.c.id == run_id, _RUNS.c.status == "running").values(heartbeat_at=deps.clock())
        )
    return bool(rowcount(result))


async def hold_lease(session: AsyncSession, run_id: uuid.UUID) -> None:
    """Lock the run row for this transaction; RunLostError if it is no longer running."""
    status = (
        await session.execute(select(_RUNS.c.status).where(_RUNS.c.id == run_id).with_for_update())
    ).scalar_one_or_none()
    if status is None:
        raise RunLostError(f"dream run {run_id} is gone: {PURGED}")
    if status != "running":
        raise RunLostError(f"dream run {run_id} is no longer running (status {status})")


async def save_progress(session: AsyncSession, run_id: uuid.UUID, stats: RunStats, now: Any) -> None:
    """Write the run's counters and heartbeat inside the caller's transaction."""
    await session.execute(update(_RUNS).where(_RUNS.c.id == run_id).values(heartbeat_at=now, **stats.columns()))


async def finish_run(
    deps: DreamDeps, run: DreamRun, status: str, error: str | None, stats: RunStats, *, strike: bool = False
) -> DreamRun:
    """Close the run (completed or failed), record its counters, and release any claims it still holds.

    A run already failed by someone else (declared abandoned) keeps that status and error. A
    completed run clears the anima's back-off; a failure with ``strike`` (the anima's own failure,
    not a shutdown) extends it, see :func:`record_outcome`. When the anima was purged meanwhile (the
    run row went with it), the returned run is a detached copy saying so.
    """
    now = deps.clock()
    async with deps.unit_of_work() as session:
        await lock_anima(session, run.anima_id)  # the lock order: advisory lock, anima row, run row
        closed = await session.execute(
            update(_RUNS)
            .where(_RUNS.c.id == run.id, _RUNS.c.status == "running")
            .values(status=status, error=error, finished_at=now, heartbeat_at=now, **stats.columns())
            .returning(_RUNS.c.anima_id)
        )
        anima_id = closed.scalar_one_or_none()
        if anima_id is not None and (status == "completed" or strike):
            await record_outcome(session, deps.limits, anima_id, status == "completed", now)
        await release_claims(session, [run.id])
        final = (await session.execute(select(DreamRun).where(col(DreamRun.id) == run.id))).scalar_one_or_none()
    if final is None:
        gone = {"status": "failed", "error": PURGED, "finished_at": now, **stats.columns()}
        return DreamRun.model_validate({**run.model_dump(), **gone})
    return final


async def record_outcome(
    session: AsyncSession, limits: DreamLimits, anima_id: uuid.UUID, succeeded: bool, now: datetime
) -> None:
    """Success clears the anima's dream back-off. A failure waits base · 2^(failures − 1) seconds
    (capped) before the scheduler tries again; after ``dreamer_max_failures`` in a row the anima is
    ``failed`` and left alone until a manual run succeeds, so one bad anima never loops forever."""
    anima = update(Anima).where(col(Anima.id) == anima_id)
    if succeeded:
        await session.execute(anima.values(dream_status="ok", dream_failures=0, dream_retry_at=None))
        return
    bumped = anima.values(dream_failures=col(Anima.dream_failures) + 1).returning(col(Anima.dream_failures))
    failures = (await session.execute(bumped)).scalar_one()
    wait = min(limits.dreamer_retry_base_seconds * 2 ** min(failures - 1, 30), limits.dreamer_retry_max_seconds)
    parked = failures >= limits.dreamer_max_failures
    retry_at = None if parked else now + timedelta(seconds=wait)
    await session.execute(anima.values(dream_status="failed" if parked else "backoff", dream_retry_at=retry_at))
