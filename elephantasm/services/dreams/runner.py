"""One dream run over one anima: lease → (claim → distil → embed → write)* → curate → finish.

No transaction is open while an LLM or a remote embedder works: a chunk is claimed in one short
transaction and written in another; CPU-only work (:func:`in_process`) reads, distils and writes a
chunk in one. A failed run records why and releases its claims; chunks it wrote stay (each is atomic).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable

from elephantasm.db.models import DreamRun
from elephantasm.domain.dreaming import (
    DistillEngine,
    DistillError,
    DistillResult,
    EventInput,
    IdentityDraft,
    OfflineEngine,
)
from elephantasm.llm.embedders import Embedder
from elephantasm.logsafe import safe_traceback
from elephantasm.observability import metrics
from elephantasm.services.dreams.claims import claim_events, count_pending, lock_anima, lock_events, watermark
from elephantasm.services.dreams.curation import curate
from elephantasm.services.dreams.deps import DreamDeps
from elephantasm.services.dreams.identity import as_draft, current_identity
from elephantasm.services.dreams.journal import journaled_write
from elephantasm.services.dreams.runs import RunLostError, RunStats, finish_run, heartbeat, hold_lease, start_run
from elephantasm.services.dreams.writer import embed_result, ensure_coverage, to_inputs, write_in

log = logging.getLogger(__name__)

Progress = Callable[[int, int], None]
"""Called with (events distilled so far, events this run expects to distil)."""


async def run_dream(
    deps: DreamDeps,
    org_id: uuid.UUID,
    anima_id: uuid.UUID,
    *,
    trigger: str = "manual",
    progress: Progress | None = None,
) -> DreamRun:
    """Start a run and execute it to the end; ConflictError if one is already running."""
    run = await start_run(deps, org_id, anima_id, trigger)
    return await execute_run(deps, run, progress)


async def start_dream_in_background(deps: DreamDeps, org_id: uuid.UUID, anima_id: uuid.UUID) -> DreamRun:
    """Start a manual run now and execute it on ``deps.tasks``; returns the running run
    (ConflictError if one is already running). The API's trigger and the inspector's button."""
    run = await start_run(deps, org_id, anima_id, "manual")
    deps.tasks.spawn(execute_run(deps, run), name=f"dream-{run.id}")
    return run


async def execute_run(deps: DreamDeps, run: DreamRun, progress: Progress | None = None) -> DreamRun:
    """Execute a started run; always ends it (completed or failed) and returns the final row."""
    stats, started = RunStats(), time.perf_counter()
    beat = asyncio.create_task(_heartbeats(deps, run.id), name=f"dream-heartbeat-{run.id}")
    # ``strike``: the failure is the anima's own (it counts toward its back-off); losing the lease
    # or a shutdown says nothing about the anima.
    status, error, strike = "completed", None, False
    cancelled: asyncio.CancelledError | None = None
    try:
        async with asyncio.timeout(deps.limits.dreamer_run_timeout_seconds):
            new_ids = await _distil_all(deps, run, stats, progress)
            t0 = time.perf_counter()
            await curate(deps, run, new_ids, stats)
            stats.time("curate", time.perf_counter() - t0)
    except DistillError as exc:
        stats.usage += exc.usage
        status, error, strike = "failed", f"distillation failed: {exc}", True
    except RunLostError as exc:
        status, error = "failed", str(exc)
    except TimeoutError:
        limit = deps.limits.dreamer_run_timeout_seconds
        status, error, strike = "failed", f"run exceeded dreamer_run_timeout_seconds ({limit})", True
    except asyncio.CancelledError as exc:
        status, error, cancelled = "failed", "cancelled (process shutting down)", exc
    except Exception as exc:
        log.error("dream run %s failed: %s", run.id, safe_traceback(exc))
        status, error, strike = "failed", f"{type(exc).__name__}: {exc}", True
    finally:
        beat.cancel()
    stats.time("total", time.perf_counter() - started)
    finishing = finish_run(deps, run, status, error, stats, strike=strike)
    try:
        # A cancelled run still records its end, even if cancelled again meanwhile.
        finished = await (finishing if cancelled is None else asyncio.shield(finishing))
    finally:
        await deps.tasks.run_locks.release(run.id)
    if cancelled is not None:
        raise cancelled
    metrics.dream_finished(finished.status, stats.events_read)
    log.info(
        "dream run %s %s: %d events, %d memories", run.id, finished.status, stats.events_read, stats.memories_created
    )
    return finished


async def _heartbeats(deps: DreamDeps, run_id: uuid.UUID) -> None:
    interval = deps.limits.dreamer_heartbeat_seconds
    while True:
        await asyncio.sleep(interval)
        try:
            if not await heartbeat(deps, run_id):
                log.warning("dream run %s is no longer running; its writes will be refused", run_id)
                return
        except Exception as exc:
            log.warning("heartbeat of dream run %s failed: %s", run_id, safe_traceback(exc))


def in_process(engine: DistillEngine, embedder: Embedder) -> bool:
    """Whether distilling and embedding a chunk is CPU work in this process with no network call to
    wait for: the stock offline engine (exactly that class: a subclass may await anything) and a local
    embedder. Then a chunk is read, distilled and written in one transaction (:func:`_local_step`)."""
    return type(engine) is OfflineEngine and bool(getattr(embedder, "in_process", False))


Step = tuple[int, list[uuid.UUID]]
"""What one chunk did: events distilled, memories created."""


async def _distil_embed(
    deps: DreamDeps, inputs: list[EventInput], identity: IdentityDraft | None, stats: RunStats
) -> tuple[DistillResult, tuple[list[list[float]], list[list[float]], list[bytes | None]]]:
    t0 = time.perf_counter()
    result = await deps.distiller.distil(inputs, identity)
    stats.usage += result.usage
    result, uncovered = ensure_coverage(inputs, result)
    stats.counts["fallback_events"] += len(result.fallback_event_ids) + uncovered
    t1 = time.perf_counter()
    vectors = await embed_result(deps.embedder, result, inputs)
    stats.time("distil", t1 - t0)
    stats.time("embed", time.perf_counter() - t1)
    return result, vectors


async def _claimed_step(deps: DreamDeps, run: DreamRun, stats: RunStats, until_seq: int, limit: int) -> Step:
    """Claim (one transaction), distil and embed with no transaction open, write (another)."""
    async with deps.unit_of_work() as session:
        await lock_anima(session, run.anima_id)  # before the run row: the lock order (claims.py)
        await hold_lease(session, run.id)
        chunk = await claim_events(session, run, deps.clock(), until_seq, limit)
        identity = as_draft(await current_identity(session, run.org_id, run.anima_id)) if chunk else None
    if chunk is None:
        return 0, []
    inputs = to_inputs(chunk.rows)
    result, vectors = await _distil_embed(deps, inputs, identity, stats)
    t0 = time.perf_counter()
    async with journaled_write(deps, run, stats) as step:
        memory_ids = await write_in(step, deps, inputs, result, vectors, chunk)
    stats.time("write", time.perf_counter() - t0)
    return len(inputs), memory_ids


async def _local_step(deps: DreamDeps, run: DreamRun, stats: RunStats, until_seq: int, limit: int) -> Step:
    """Read, distil, embed and write one chunk in one journaled transaction (see :func:`in_process`)."""
    async with journaled_write(deps, run, stats) as step:
        chunk = await lock_events(step.session, run, until_seq, limit)
        if chunk is None:
            return 0, []
        inputs = to_inputs(chunk.rows)
        identity = as_draft(await current_identity(step.session, run.org_id, run.anima_id))
        result, vectors = await _distil_embed(deps, inputs, identity, step.stats)
        t1 = time.perf_counter()
        memory_ids = await write_in(step, deps, inputs, result, vectors, chunk)
    stats.time("write", time.perf_counter() - t1)
    return len(inputs), memory_ids


async def _distil_all(deps: DreamDeps, run: DreamRun, stats: RunStats, progress: Progress | None) -> list[uuid.UUID]:
    """Distil chunk after chunk until nothing recorded before the run started is pending."""
    limits = deps.limits
    budget = limits.dreamer_max_events_per_run
    async with deps.read_session() as session:
        # The anima's event_seq at the start of the run (set by start_run): later events wait.
        until = run.until_seq if run.until_seq is not None else (await watermark(session, run.anima_id))[1]
        total = min(await count_pending(session, run.org_id, run.anima_id, until), budget)
    if progress:
        progress(0, total)
    step = _local_step if in_process(deps.distiller, deps.embedder) else _claimed_step
    new_ids: list[uuid.UUID] = []
    # Start no new chunk past half the run's hard timeout: the run then ends cleanly and the rest
    # waits for the next run, instead of a long LLM run being cut off mid-chunk by the timeout.
    deadline = time.monotonic() + limits.dreamer_run_timeout_seconds / 2
    while stats.events_read < budget:
        if new_ids and time.monotonic() > deadline:
            stats.counts["stopped_at_time_budget"] = 1
            break
        done, memory_ids = await step(
            deps, run, stats, until, min(limits.dreamer_chunk_events, budget - stats.events_read)
        )
        if not done:
            break
        new_ids += memory_ids
        if progress:
            progress(stats.events_read, max(total, stats.events_read))
    return new_ids
