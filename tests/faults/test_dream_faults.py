"""A dream run's faults against a real ``serve`` process (issue 28, items 2 and 11).

- Purging an anima a fraction of a second after its dream started on a few thousand pending events:
  204, nothing of the anima left, and no deadlock (the purge waits for the step in progress; the run
  then finds its anima gone and ends).
- ``kill -9`` of the server mid-dream: the next trigger works at once (the dead run's lock is free),
  not 409 until the heartbeat goes stale (``dreamer_stale_seconds``, two minutes by default).
"""

from __future__ import annotations

import asyncio
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from elephantasm.runtime import Runtime
from tests.conftest import TEST_SECRET, Tenant
from tests.dreams.helpers import add_events, turns, wait_for_dreams
from tests.lifecycle.helpers import rows_of
from tests.support.servers import free_port, server_env, start_server, stop_server

PENDING = 4000
PROMPTLY = 15.0  # seconds: far below dreamer_stale_seconds (120), generous for a busy machine


class Serve:
    """A ``serve`` subprocess over the test database, with its own log."""

    def __init__(self, pg_url: str, data_dir: Path, name: str) -> None:
        self.port = free_port()
        self.log = data_dir / f"{name}-{uuid.uuid4().hex[:6]}.log"
        self.proc = start_server(server_env(pg_url, TEST_SECRET, data_dir), self.port, self.log)
        self.url = f"http://127.0.0.1:{self.port}"

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


@pytest.fixture
def serve(pg_url: str, data_dir: Path) -> Iterator[Serve]:
    server = Serve(pg_url, data_dir, "dream-faults")
    try:
        yield server
    finally:
        stop_server(server.proc)


async def _busy_anima(runtime: Runtime, c: httpx.AsyncClient, tenant: Tenant) -> str:
    r = await c.post("/api/animas", json={"name": "busy"}, headers=tenant.headers)
    assert r.status_code == 201, r.text
    texts = [f"turn {i}: I keep a note that item {i} goes on shelf {i % 97}." for i in range(PENDING)]
    await add_events(runtime, tenant.org_id, uuid.UUID(r.json()["id"]), turns(texts, step=5.0))
    return str(r.json()["id"])


async def _wait_for_line(serve: Serve, text: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while text not in serve.log_text():
        assert time.monotonic() < deadline, f"{text!r} not logged:\n{serve.log_text()[-3000:]}"
        await asyncio.sleep(0.2)


async def test_purge_during_a_dream_erases_the_anima_without_a_deadlock(
    serve: Serve, runtime: Runtime, tenant: Tenant
) -> None:
    async with httpx.AsyncClient(base_url=serve.url, timeout=120) as c:
        anima_id = await _busy_anima(runtime, c, tenant)
        r = await c.post("/api/dreams/trigger", json={"anima_id": anima_id}, headers=tenant.headers)
        assert r.status_code == 202, r.text
        run_id = r.json()["id"]
        await asyncio.sleep(0.4)
        r = await c.delete(f"/api/animas/{anima_id}", params={"purge": "true"}, headers=tenant.headers)
        assert r.status_code == 204, r.text
        await _wait_for_line(serve, f"dream run {run_id} failed")  # it ended, and said why
        assert (await c.get(f"/api/dreams/sessions/{run_id}", headers=tenant.headers)).status_code == 404
    assert set((await rows_of(runtime, anima_id)).values()) == {0}
    log = serve.log_text()
    assert "deadlock" not in log.lower() and "Traceback" not in log, log[-3000:]


async def test_after_kill_9_mid_dream_the_next_trigger_works_at_once(
    serve: Serve, client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    async with httpx.AsyncClient(base_url=serve.url, timeout=120) as c:
        anima_id = await _busy_anima(runtime, c, tenant)
        r = await c.post("/api/dreams/trigger", json={"anima_id": anima_id}, headers=tenant.headers)
        assert r.status_code == 202, r.text
        killed_run = r.json()["id"]
    await asyncio.sleep(0.5)
    serve.proc.send_signal(signal.SIGKILL)
    serve.proc.wait(30)
    r = await client.get(f"/api/dreams/sessions/{killed_run}", headers=tenant.headers)
    assert r.json()["status"] == "running", "the run ended before the kill: nothing was tested"

    # Postgres ends the dead process's sessions (and frees its locks) as soon as it notices the
    # closed sockets; a retry loop covers those milliseconds, far from the two-minute staleness.
    deadline = time.monotonic() + PROMPTLY
    while True:
        r = await client.post("/api/dreams/trigger", json={"anima_id": anima_id}, headers=tenant.headers)
        if r.status_code != 409 or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.2)
    assert r.status_code == 202, r.text
    await wait_for_dreams(runtime.dream_tasks)
    killed = (await client.get(f"/api/dreams/sessions/{killed_run}", headers=tenant.headers)).json()
    assert killed["status"] == "failed" and "process is gone" in killed["error"], killed
    new = (await client.get(f"/api/dreams/sessions/{r.json()['id']}", headers=tenant.headers)).json()
    assert new["status"] == "completed", new
    r = await client.get("/api/events", params={"anima_id": anima_id, "limit": 1000}, headers=tenant.headers)
    assert all(e.get("distilled_at") for e in r.json()["items"]), "events left pending after the new run"
