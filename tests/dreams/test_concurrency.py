"""Claims and leases: concurrent workers, events arriving mid-run, a run killed mid-way."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from sqlalchemy import select, update

from elephantasm.db.models import DreamRun, Event
from elephantasm.domain.dreaming import OfflineEngine
from elephantasm.domain.errors import ConflictError
from elephantasm.runtime import Runtime, build_runtime
from elephantasm.services.dreams import execute_run, run_dream
from elephantasm.services.dreams.claims import claim_events, mark_distilled
from elephantasm.settings import Settings
from tests.conftest import TEST_SECRET, Tenant
from tests.dreams.helpers import T0, add_events, claimed_count, live_provenance, new_anima, pending_ids, turns, variant
from tests.support.openai_server import OpenAIServer, slow
from tests.support.servers import REPO_ROOT


def _chat(n: int, session: str = "s1") -> list[dict]:
    words = ["budget", "garden", "piano", "rocket", "harbor", "violet", "compiler", "tundra", "saffron", "glacier"]
    texts = [f"Turn {i}: thoughts on the {words[i % 10]} and the {words[(i * 7 + 3) % 10]} ({i})." for i in range(n)]
    return turns(texts, session=session)


async def _runs(runtime: Runtime, anima_id: uuid.UUID) -> list[DreamRun]:
    async with runtime.read_session() as session:
        stmt = select(DreamRun).where(DreamRun.anima_id == anima_id).order_by(DreamRun.started_at)
        return list((await session.execute(stmt)).scalars())


def _assert_each_event_once(prov: dict, events: list[Event]) -> None:
    cited = [e for ids in prov.values() for e in ids]
    assert sorted(cited) == sorted(e.id for e in events)  # every event, exactly once among live memories


async def _running(runtime: Runtime, org_id: uuid.UUID, anima_id: uuid.UUID, n: int) -> list[DreamRun]:
    """``n`` running runs on one anima, bypassing start_run's lease on purpose."""
    runs = []
    async with runtime.unit_of_work() as session:
        for _ in range(n):
            run = DreamRun(
                org_id=org_id,
                anima_id=anima_id,
                status="running",
                trigger="race",
                engine="offline",
                started_at=runtime.clock(),
                heartbeat_at=runtime.clock(),
            )
            session.add(run)
            runs.append(run)
    return runs


async def test_a_live_claim_holds_other_runs_back_until_its_chunk_is_written(runtime: Runtime, tenant: Tenant) -> None:
    anima_id = await new_anima(runtime, tenant.org_id)
    events = await add_events(runtime, tenant.org_id, anima_id, _chat(40))
    a, b = await _running(runtime, tenant.org_id, anima_id, 2)
    now = runtime.clock()
    async with runtime.unit_of_work() as session:
        first = await claim_events(session, a, now, 40, 25)
    async with runtime.unit_of_work() as session:
        blocked = await claim_events(session, b, now, 40, 25)  # the watermark must pass a's chunk first
    assert first is not None and blocked is None and await claimed_count(runtime, anima_id) == 25
    assert [r.occurred_at for r in first.rows] == sorted(r.occurred_at for r in first.rows)
    async with runtime.unit_of_work() as session:
        assert await mark_distilled(session, tenant.org_id, anima_id, a.id, first, now)
    async with runtime.unit_of_work() as session:
        second = await claim_events(session, b, now, 40, 25)
    assert second is not None and (second.first_seq, second.last_seq) == (26, 40)
    ids_a, ids_b = {r.id for r in first.rows}, {r.id for r in second.rows}
    assert len(ids_a) == 25 and not ids_a & ids_b and ids_a | ids_b == {e.id for e in events}
    async with runtime.unit_of_work() as session:  # a cannot write its chunk twice
        assert not await mark_distilled(session, tenant.org_id, anima_id, a.id, first, now)


async def test_a_run_declared_abandoned_cannot_write_what_another_run_took(runtime: Runtime, tenant: Tenant) -> None:
    anima_id = await new_anima(runtime, tenant.org_id)
    await add_events(runtime, tenant.org_id, anima_id, _chat(10))
    a, b = await _running(runtime, tenant.org_id, anima_id, 2)
    now = runtime.clock()
    async with runtime.unit_of_work() as session:
        lost = await claim_events(session, a, now, 10, 10)
        await session.execute(update(DreamRun).where(DreamRun.id == a.id).values(status="failed"))
    async with runtime.unit_of_work() as session:
        taken = await claim_events(session, b, now, 10, 10)  # a's claim is an orphan now: dropped
    assert lost is not None and taken is not None and lost.claim_id != taken.claim_id
    async with runtime.unit_of_work() as session:
        assert not await mark_distilled(session, tenant.org_id, anima_id, a.id, lost, now)
    async with runtime.unit_of_work() as session:
        assert await mark_distilled(session, tenant.org_id, anima_id, b.id, taken, now)
    assert await pending_ids(runtime, anima_id) == set()


async def test_two_workers_on_one_anima_distil_each_event_exactly_once(
    runtime: Runtime, settings: Settings, pg_url: str, tenant: Tenant
) -> None:
    anima_id = await new_anima(runtime, tenant.org_id)
    events = await add_events(runtime, tenant.org_id, anima_id, _chat(600) + _chat(300, session="s2"))
    small = settings.model_copy(update={"dreamer_chunk_events": 100, "dreamer_max_events_per_run": 250})
    workers = [build_runtime(small, database_url=pg_url) for _ in range(2)]  # two pools: two "processes"
    conflicts = 0

    async def work(rt: Runtime) -> None:
        nonlocal conflicts
        while await pending_ids(rt, anima_id):
            try:
                run = await run_dream(rt.dreams, tenant.org_id, anima_id, trigger="worker")
                assert run.status == "completed", run.error
            except ConflictError:
                conflicts += 1
                await asyncio.sleep(0.01)

    try:
        await asyncio.gather(*(work(rt) for rt in workers))
    finally:
        for rt in workers:
            await rt.close()
    runs = await _runs(runtime, anima_id)
    assert sum(r.events_read for r in runs) == len(events) and len(runs) >= 4 and conflicts > 0
    _assert_each_event_once(await live_provenance(runtime, anima_id), events)


async def test_two_runs_racing_past_the_lease_still_split_the_events(runtime: Runtime, tenant: Tenant) -> None:
    """Defence in depth: even two live runs on one anima never distil the same event."""
    anima_id = await new_anima(runtime, tenant.org_id)
    events = await add_events(runtime, tenant.org_id, anima_id, _chat(500))
    rt = variant(runtime, engine=OfflineEngine(), dreamer_chunk_events=50)
    runs = await _running(rt, tenant.org_id, anima_id, 2)
    done = await asyncio.gather(*(execute_run(rt.dreams, run) for run in runs))
    assert all(r.status == "completed" for r in done), [r.error for r in done]
    assert sum(r.events_read for r in done) == len(events) and all(r.events_read for r in done)
    _assert_each_event_once(await live_provenance(runtime, anima_id), events)


class ArrivingEngine(OfflineEngine):
    """Offline, but a new (back-dated) event is recorded while the first chunk is being distilled."""

    def __init__(self, runtime: Runtime, org_id: uuid.UUID, anima_id: uuid.UUID) -> None:
        super().__init__()
        self.args = (runtime, org_id, anima_id)
        self.arrived: list[Event] = []

    async def distil(self, events, existing_identity):  # type: ignore[no-untyped-def]
        if not self.arrived:
            spec = {
                "event_type": "message.in",
                "content": "I forgot to say: I live in Quito.",
                "session_id": "s1",
                "occurred_at": T0 - timedelta(days=1),
            }
            self.arrived = await add_events(*self.args, [spec])
        return await super().distil(events, existing_identity)


async def test_event_arriving_mid_run_is_distilled_by_the_next_run(runtime: Runtime, tenant: Tenant) -> None:
    anima_id = await new_anima(runtime, tenant.org_id)
    events = await add_events(runtime, tenant.org_id, anima_id, _chat(10))
    engine = ArrivingEngine(runtime, tenant.org_id, anima_id)
    first = await run_dream(replace(runtime.dreams, distiller=engine), tenant.org_id, anima_id)
    assert first.status == "completed" and first.events_read == 10
    assert await pending_ids(runtime, anima_id) == {engine.arrived[0].id}  # not skipped, not lost: pending
    second = await run_dream(runtime.dreams, tenant.org_id, anima_id)
    assert second.events_read == 1 and await pending_ids(runtime, anima_id) == set()
    _assert_each_event_once(await live_provenance(runtime, anima_id), events + engine.arrived)


async def test_killed_run_loses_nothing_and_the_next_run_completes(
    runtime: Runtime, tenant: Tenant, pg_url: str, data_dir: Path, openai_server: OpenAIServer
) -> None:
    anima_id = await new_anima(runtime, tenant.org_id)
    events = await add_events(runtime, tenant.org_id, anima_id, _chat(30))
    openai_server.script(slow(60))  # the LLM call hangs: the process is killed during it
    env = dict(
        os.environ,
        ELEPHANTASM_DATABASE_URL=pg_url,
        ELEPHANTASM_SECRET_KEY=TEST_SECRET,
        ELEPHANTASM_DATA_DIR=str(data_dir),
        ELEPHANTASM_LLM_BASE_URL=openai_server.base_url,
        ELEPHANTASM_DREAMER_HEARTBEAT_SECONDS="0.2",
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "elephantasm.cli.main", "dream", str(anima_id)],
        env=env,
        cwd=REPO_ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not openai_server.chat_requests:
            assert proc.poll() is None and time.monotonic() < deadline, "the dream never reached the LLM"
            await asyncio.sleep(0.05)
        assert await claimed_count(runtime, anima_id) == len(events)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    (dead,) = await _runs(runtime, anima_id)
    assert dead.status == "running"  # nobody said otherwise: only its silence gives it away

    rt = variant(runtime, engine=OfflineEngine(), dreamer_stale_seconds=0.5)
    await asyncio.sleep(1.0)
    run = await run_dream(rt.dreams, tenant.org_id, anima_id)
    assert run.status == "completed" and run.events_read == len(events)
    dead, _ = await _runs(runtime, anima_id)
    assert dead.status == "failed" and "abandoned" in dead.error and dead.finished_at is not None
    assert await pending_ids(runtime, anima_id) == set()
    _assert_each_event_once(await live_provenance(runtime, anima_id), events)
