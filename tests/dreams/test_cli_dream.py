"""`elephantasm dream ANIMA`: one run from the command line, with a summary table."""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

import pytest

from elephantasm.db.models import DreamRun
from elephantasm.ids import uuid7
from elephantasm.runtime import Runtime
from elephantasm.services.keys import get_or_create_org
from tests.dreams.helpers import add_events, new_anima, pending_ids, turns
from tests.support.cli import run_cli


@pytest.fixture
def cli(pg_url: str, data_dir: Path):  # type: ignore[no-untyped-def]
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return run_cli(pg_url, data_dir, *args)

    return run


async def test_dream_by_id_and_by_name(cli, runtime: Runtime) -> None:  # type: ignore[no-untyped-def]
    org_name = f"cli-dream-{uuid.uuid4().hex[:8]}"
    async with runtime.unit_of_work() as session:
        org = await get_or_create_org(session, org_name)
    anima_id = await new_anima(runtime, org.id, "walter")
    await add_events(runtime, org.id, anima_id, turns(["I live in Porto and love jazz.", "Porto and jazz!"] * 3))

    result = cli("dream", str(anima_id))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "completed" in result.stdout and "events distilled" in result.stdout
    assert "memories created" in result.stdout and "events/s" in result.stdout
    assert await pending_ids(runtime, anima_id) == set()

    await add_events(runtime, org.id, anima_id, turns(["One more thing.", "Yes?"], session="s2"))
    by_name = cli("dream", "walter", "--org", org_name)
    assert by_name.returncode == 0, by_name.stdout + by_name.stderr
    assert await pending_ids(runtime, anima_id) == set()

    assert cli("dream", str(uuid.uuid4())).returncode == 2
    assert cli("dream", "nobody", "--org", org_name).returncode == 2


async def test_dream_while_another_runs_exits_2(cli, runtime: Runtime, tenant) -> None:  # type: ignore[no-untyped-def]
    anima_id = await new_anima(runtime, tenant.org_id)
    live = uuid7()
    await runtime.dream_tasks.run_locks.take(
        runtime.background.engine, live
    )  # its process is alive: it holds the run's lock
    async with runtime.unit_of_work() as session:
        session.add(
            DreamRun(
                id=live,
                org_id=tenant.org_id,
                anima_id=anima_id,
                status="running",
                trigger="test",
                engine="offline",
                started_at=runtime.clock(),
                heartbeat_at=runtime.clock(),
            )
        )
    try:
        result = cli("dream", str(anima_id))
    finally:
        await runtime.dream_tasks.run_locks.release(live)
    assert result.returncode == 2 and "already running" in result.stderr
