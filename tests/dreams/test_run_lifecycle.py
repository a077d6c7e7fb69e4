"""How a run ends: cancelled by shutdown, cut by its time budget, or over its hard timeout."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from sqlalchemy import select

from elephantasm.db.models import DreamRun
from elephantasm.domain.dreaming import OfflineEngine
from elephantasm.runtime import Runtime
from elephantasm.services.dreams import execute_run, run_dream, start_run
from elephantasm.services.dreams.liveness import gone_runs
from tests.conftest import Tenant
from tests.dreams.helpers import add_events, claimed_count, new_anima, pending_ids, turns, variant


class SlowEngine(OfflineEngine):
    """Offline, after ``delay`` seconds per chunk; ``entered`` is set once it starts."""

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay, self.entered = delay, asyncio.Event()

    async def distil(self, events, existing_identity):  # type: ignore[no-untyped-def]
        self.entered.set()
        await asyncio.sleep(self.delay)
        return await super().distil(events, existing_identity)


async def test_shutdown_cancels_a_run_which_records_it_and_releases_its_claims(
    runtime: Runtime, tenant: Tenant
) -> None:
    engine = SlowEngine(60)
    rt = variant(runtime, engine=engine)
    anima_id = await new_anima(rt, tenant.org_id)
    events = await add_events(rt, tenant.org_id, anima_id, turns(["one", "two", "three"]))
    run = await start_run(rt.dreams, tenant.org_id, anima_id, "test")
    rt.dream_tasks.spawn(execute_run(rt.dreams, run))
    await asyncio.wait_for(engine.entered.wait(), 5)
    assert await claimed_count(rt, anima_id) == 3
    await rt.dream_tasks.close()
    async with rt.read_session() as session:
        ended = (await session.execute(select(DreamRun).where(DreamRun.id == run.id))).scalar_one()
    assert ended.status == "failed" and "cancelled" in ended.error
    assert await claimed_count(rt, anima_id) == 0 and await pending_ids(rt, anima_id) == {e.id for e in events}


async def _ended(rt: Runtime, run_id: uuid.UUID) -> DreamRun:
    """The run's row once it is no longer running (its end may still be recording in the background)."""
    async with asyncio.timeout(30):
        while True:
            async with rt.read_session() as session:
                row = (await session.execute(select(DreamRun).where(DreamRun.id == run_id))).scalar_one()
            if row.status != "running":
                return row
            await asyncio.sleep(0.05)


async def test_a_second_cancellation_while_a_cancelled_run_records_its_end_still_ends_it(
    runtime: Runtime, tenant: Tenant
) -> None:
    """The cancelled run's record of its end is shielded: a second cancellation ends the task at once,
    the run's lock is released by then, and the record still completes in the background."""
    engine = SlowEngine(60)
    rt = variant(runtime, engine=engine)
    anima_id = await new_anima(rt, tenant.org_id)
    events = await add_events(rt, tenant.org_id, anima_id, turns(["one", "two"]))
    run = await start_run(rt.dreams, tenant.org_id, anima_id, "test")
    task = rt.dream_tasks.spawn(execute_run(rt.dreams, run))
    await asyncio.wait_for(engine.entered.wait(), 5)
    task.cancel()
    await asyncio.sleep(0)  # the run takes the first cancellation and starts recording its end
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    async with rt.read_session() as session:
        assert await gone_runs(session, [run.id]) == [run.id]  # the run lock is free
    ended = await _ended(rt, run.id)
    assert ended.status == "failed" and ended.error == "cancelled (process shutting down)"
    assert await claimed_count(rt, anima_id) == 0 and await pending_ids(rt, anima_id) == {e.id for e in events}
    await rt.dream_tasks.close()


async def test_time_budget_ends_the_run_cleanly_between_chunks(runtime: Runtime, tenant: Tenant) -> None:
    # A chunk takes longer than the budget (half of the 6 s timeout) on any machine, so the run stops
    # after its first chunk; the 2.5 s left before the hard timeout absorb a loaded machine's slowness.
    rt = variant(runtime, engine=SlowEngine(3.5), dreamer_chunk_events=2, dreamer_run_timeout_seconds=6)
    anima_id = await new_anima(rt, tenant.org_id)
    await add_events(rt, tenant.org_id, anima_id, turns([f"message {i}" for i in range(12)]))
    run = await run_dream(rt.dreams, tenant.org_id, anima_id)
    assert run.status == "completed" and run.counts["stopped_at_time_budget"] == 1
    assert 2 <= run.events_read < 12 and len(await pending_ids(rt, anima_id)) == 12 - run.events_read


async def test_hard_timeout_fails_the_run_and_keeps_events_pending(runtime: Runtime, tenant: Tenant) -> None:
    rt = variant(runtime, engine=SlowEngine(5), dreamer_run_timeout_seconds=0.5)
    anima_id = await new_anima(rt, tenant.org_id)
    events = await add_events(rt, tenant.org_id, anima_id, turns(["a", "b"]))
    run = await run_dream(rt.dreams, tenant.org_id, anima_id)
    assert run.status == "failed" and "dreamer_run_timeout_seconds" in run.error
    assert await pending_ids(rt, anima_id) == {e.id for e in events} and await claimed_count(rt, anima_id) == 0
