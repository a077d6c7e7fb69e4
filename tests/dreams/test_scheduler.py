"""Scheduling: the debounced threshold trigger, the sweep, the in-process lifespan and `elephantasm dreamer`.

The scheduler's jobs look at every anima of the database, so the tests that run them in this process
do so on a database of their own: on the suite's shared one, other tests' animas with pending events
would compete for the same due list (it is limited and oldest-first) and get dreamed as a side effect."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from dreamer.scheduler import Dreamer, build_scheduler, scheduler_lifespan
from elephantasm.db.models import DreamRun
from elephantasm.runtime import Runtime, utc_now
from elephantasm.services.dreams import run_dream
from elephantasm.services.dreams.due import find_sleepy_animas
from elephantasm.settings import Settings
from tests.conftest import TEST_SECRET, Tenant, make_tenant
from tests.dreams.helpers import add_events, new_anima, pending_ids, turns, variant, wait_for_dreams
from tests.support.databases import own_runtime
from tests.support.servers import REPO_ROOT


async def _triggers(runtime: Runtime, anima_id) -> list[str]:  # type: ignore[no-untyped-def]
    async with runtime.read_session() as session:
        stmt = select(DreamRun.trigger).where(DreamRun.anima_id == anima_id).order_by(DreamRun.started_at)
        return list((await session.execute(stmt)).scalars())


async def _until(predicate, timeout: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not await predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.05)


async def test_threshold_waits_for_enough_events_and_quiet(pg_url: str, settings: Settings) -> None:
    # The dreamer's clock is moved by hand, not slept past: a wall-clock debounce failed whenever the
    # machine stalled longer than the debounce between adding the events and the first check.
    async with own_runtime(pg_url, settings, "threshold") as runtime:
        await _threshold_waits_for_enough_events_and_quiet(runtime, await make_tenant(runtime))


async def _threshold_waits_for_enough_events_and_quiet(runtime: Runtime, tenant: Tenant) -> None:
    now = [utc_now()]
    rt = dataclasses.replace(
        variant(runtime, dreamer_trigger_events=6, dreamer_debounce_seconds=30), clock=lambda: now[0]
    )
    busy, few = await new_anima(rt, tenant.org_id, "busy"), await new_anima(rt, tenant.org_id, "few")
    await add_events(rt, tenant.org_id, busy, turns(["a b c"] * 6))
    await add_events(rt, tenant.org_id, few, turns(["x y"] * 2))
    now[0] = utc_now()
    dreamer = Dreamer(rt)
    await dreamer.threshold()  # enough events, but the burst has not settled yet
    assert await _triggers(rt, busy) == []
    now[0] += timedelta(seconds=31)
    await dreamer.threshold()
    await wait_for_dreams(rt.dream_tasks)
    assert await _triggers(rt, busy) == ["threshold"] and await pending_ids(rt, busy) == set()
    assert await _triggers(rt, few) == []  # below the threshold: left to the sweep
    await dreamer.sweep()
    await wait_for_dreams(rt.dream_tasks)
    assert await _triggers(rt, few) == ["sweep"] and await pending_ids(rt, few) == set()


async def test_scheduler_lifespan_dreams_in_process(pg_url: str, settings: Settings) -> None:
    async with own_runtime(pg_url, settings, "lifespan") as runtime:
        await _scheduler_lifespan_dreams_in_process(runtime, await make_tenant(runtime))


async def _scheduler_lifespan_dreams_in_process(runtime: Runtime, tenant: Tenant) -> None:
    rt = variant(runtime, dreamer_trigger_events=1, dreamer_debounce_seconds=0, dreamer_poll_seconds=0.2)
    anima_id = await new_anima(rt, tenant.org_id)
    async with scheduler_lifespan(rt):
        await add_events(rt, tenant.org_id, anima_id, turns(["Hello there, I live in Quito.", "Hi!"]))

        async def distilled() -> bool:
            return not await pending_ids(rt, anima_id) and bool(await _triggers(rt, anima_id))

        await _until(distilled)
    assert not rt.dream_tasks._tasks


async def test_dreamer_command_runs_alone_and_stops_on_sigterm(
    runtime: Runtime, tenant: Tenant, pg_url: str, data_dir: Path
) -> None:
    anima_id = await new_anima(runtime, tenant.org_id)
    await add_events(runtime, tenant.org_id, anima_id, turns(["Remember: my favorite color is red.", "Red it is."]))
    env = dict(
        os.environ,
        ELEPHANTASM_DATABASE_URL=pg_url,
        ELEPHANTASM_SECRET_KEY=TEST_SECRET,
        ELEPHANTASM_DATA_DIR=str(data_dir),
        ELEPHANTASM_DREAMER_POLL_SECONDS="0.2",
        ELEPHANTASM_DREAMER_TRIGGER_EVENTS="1",
        ELEPHANTASM_DREAMER_DEBOUNCE_SECONDS="0",
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "elephantasm.cli.main", "dreamer"],
        env=env,
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:

        async def distilled() -> bool:
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            return not await pending_ids(runtime, anima_id)

        # Generous bounds: a loaded machine slows the subprocess (start, runs, shutdown), and the bounds
        # only decide how long a truly stuck dreamer takes to fail the test.
        await _until(distilled, timeout=120)
        await add_events(runtime, tenant.org_id, anima_id, turns(["And I moved to Lima.", "Lima!"], session="s2"))
        await _until(distilled, timeout=120)  # the threshold trigger picks up new events too
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=90)
    assert proc.returncode == 0, out
    assert "Dreamer running" in out and "Dreamer stopped" in out
    assert len(await _triggers(runtime, anima_id)) >= 2


async def test_serve_runs_the_dreamer_in_process(pg_url: str, data_dir: Path) -> None:
    """On its own database, so the served dreamer sees only this test's anima (not the whole suite's)."""
    import re

    import httpx

    from elephantasm.db.migrate import upgrade_async
    from tests.support.databases import create_database, drop_database
    from tests.support.servers import free_port, server_env, start_server, stop_server

    db_url = create_database(pg_url, "dreamer_serve")
    await upgrade_async(db_url)
    port = free_port()
    log = data_dir / f"serve-dreamer-{port}.log"
    env = server_env(
        db_url,
        TEST_SECRET,
        data_dir,
        ELEPHANTASM_DREAMER_ENABLED="true",
        ELEPHANTASM_DREAMER_POLL_SECONDS="0.2",
        ELEPHANTASM_DREAMER_TRIGGER_EVENTS="2",
        ELEPHANTASM_DREAMER_DEBOUNCE_SECONDS="0",
    )
    proc = start_server(env, port, log)
    try:
        key_file = data_dir / "first-api-key"  # first-start bootstrap (stdout is a log: not there)
        key = re.search(r"export ELEPHANTASM_API_KEY=(\S+)", key_file.read_text()).group(1)
        key_file.unlink()
        async with httpx.AsyncClient(
            base_url=f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {key}"}
        ) as http:
            anima = (await http.post("/api/animas", json={"name": "served"})).json()
            batch = [
                {"anima_id": anima["id"], **{k: (v.isoformat() if k == "occurred_at" else v) for k, v in e.items()}}
                for e in turns(["I live in Nairobi.", "Nairobi, nice!", "I like tea.", "Tea it is."])
            ]
            assert (await http.post("/api/events/batch", json={"events": batch})).status_code == 201

            async def run_finished() -> bool:
                # Events are marked distilled inside the run; the run row completes just after.
                runs = (await http.get("/api/dreams/sessions", params={"anima_id": anima["id"]})).json()["items"]
                return bool(runs) and all(r["status"] != "running" for r in runs)

            await _until(run_finished, timeout=60)
            runs = (await http.get("/api/dreams/sessions", params={"anima_id": anima["id"]})).json()["items"]
            assert runs[0]["status"] == "completed" and runs[0]["trigger"] in ("threshold", "sweep")
            items = (await http.get("/api/events", params={"anima_id": anima["id"]})).json()["items"]
            assert len(items) == 4 and all(e["distilled_at"] for e in items)
    finally:
        stop_server(proc)
        drop_database(db_url)


async def test_idle_animas_get_a_sleep_run(runtime: Runtime, tenant: Tenant) -> None:
    """The sweep's second half; only this anima is run, so other tests' animas are left alone."""
    anima_id = await new_anima(runtime, tenant.org_id)
    await add_events(runtime, tenant.org_id, anima_id, turns(["ok then", "sure"]))
    rt = variant(runtime, dreamer_sleep_hours=24)
    await run_dream(rt.dreams, tenant.org_id, anima_id)

    async def sleepy(at) -> list:  # type: ignore[no-untyped-def]
        async with rt.read_session() as session:
            found = await find_sleepy_animas(session, at, timedelta(hours=24), limit=100_000)
        return [d for d in found if d.anima_id == anima_id]

    assert await sleepy(rt.clock()) == []  # it just ran
    later = rt.clock() + timedelta(days=200)
    due = await sleepy(later)
    assert len(due) == 1
    rt.clock = lambda: later
    assert Dreamer(rt)._spawn(due, "sleep") == 1
    await wait_for_dreams(rt.dream_tasks)
    assert await _triggers(rt, anima_id) == ["manual", "sleep"]
    async with rt.read_session() as session:
        last = (
            await session.execute(select(DreamRun).where(DreamRun.anima_id == anima_id, DreamRun.trigger == "sleep"))
        ).scalar_one()
    assert last.status == "completed" and last.events_read == 0 and last.counts["decaying"] == 1


async def test_a_tick_skipped_behind_a_slow_poll_is_no_warning(
    runtime: Runtime, caplog: pytest.LogCaptureFixture
) -> None:
    """A poll still running at its next tick (a process busy starting up) is back-pressure, not a fault."""
    build_scheduler(Dreamer(runtime))
    scheduler_log = logging.getLogger("apscheduler.scheduler")
    with caplog.at_level(logging.INFO, logger="apscheduler.scheduler"):
        skipped = 'Execution of job "%s" skipped: maximum number of running instances reached (%d)'
        scheduler_log.warning(skipped, "dream-threshold (trigger: interval[0:00:01])", 1)
        scheduler_log.warning("some other scheduler trouble")
    assert [r.getMessage() for r in caplog.records] == ["some other scheduler trouble"]
