"""Postgres stuck or dead under a running ``serve`` (issue 28, item 3).

Stopped (SIGSTOP: every Postgres process): each sampled DB-backed route, the health check included,
answers 503 with ``Retry-After`` instead of hanging, and all is well again after SIGCONT. Killed
(SIGKILL of the postmaster): ``serve``'s supervisor starts it again and the service is healthy
again without a restart of ``serve``, its data intact.

The client's timeout is the bound the configured limits allow (connect, pool checkout, one statement
plus the driver's grace, twice), generous for a busy machine: it checks that an answer comes, not
how fast.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterator

import httpx
import psutil
import pytest

from tests.faults.helpers import EmbeddedServer, embedded_server, postgres_processes, postmasters, signal_all

TIMEOUT = 2  # seconds: connect, pool checkout and statement limits of the server under test
ANSWER_WITHIN = 4 * (TIMEOUT + 2) + 20


@pytest.fixture(scope="module")
def server() -> Iterator[EmbeddedServer]:
    with embedded_server(
        "elephantasm-outage-",
        ELEPHANTASM_DB_CONNECT_TIMEOUT_SECONDS=str(TIMEOUT),
        ELEPHANTASM_DB_POOL_TIMEOUT_SECONDS=str(TIMEOUT),
        ELEPHANTASM_DB_STATEMENT_TIMEOUT_SECONDS=str(TIMEOUT),
        ELEPHANTASM_EMBEDDED_SUPERVISE_SECONDS="0.5",
        ELEPHANTASM_EMBEDDED_RESTART_BACKOFF_MAX_SECONDS="4",
    ) as s:
        yield s


def _requests(anima_id: str) -> list[tuple[str, str, dict]]:
    event = {"anima_id": anima_id, "event_type": "message.in", "content": "is anyone there?"}
    return [
        ("GET", "/api/health", {}),
        ("GET", "/api/animas", {}),
        ("GET", f"/api/animas/{anima_id}", {}),
        ("POST", "/api/events", {"json": event}),
        ("GET", "/api/events", {"params": {"anima_id": anima_id}}),
        ("GET", f"/api/animas/{anima_id}/memory-packs/latest", {"params": {"query": "there"}}),
        ("GET", "/api/memories", {"params": {"anima_id": anima_id}}),
        ("GET", "/api/dreams/sessions", {}),
        ("POST", "/api/dreams/trigger", {"json": {"anima_id": anima_id}}),
    ]


async def _all(server: EmbeddedServer, requests: list[tuple[str, str, dict]]) -> list[httpx.Response]:
    async with httpx.AsyncClient(base_url=server.base_url, headers=server.headers, timeout=ANSWER_WITHIN) as c:
        return await asyncio.gather(*(c.request(method, path, **kw) for method, path, kw in requests))


def _anima(server: EmbeddedServer) -> str:
    r = httpx.post(f"{server.base_url}/api/animas", json={"name": "outage"}, headers=server.headers, timeout=30)
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


def test_a_stopped_postgres_gives_503_with_retry_after_then_recovers(server: EmbeddedServer) -> None:
    anima_id = _anima(server)
    requests = _requests(anima_id)
    stopped = postgres_processes(server.pgdata)
    assert stopped, "no Postgres processes found"
    signal_all(stopped, signal.SIGSTOP)
    try:
        answers = asyncio.run(_all(server, requests))
    finally:
        signal_all(stopped, signal.SIGCONT)
    for (method, path, _), r in zip(requests, answers, strict=True):
        assert r.status_code == 503, (method, path, r.status_code, r.text)
        assert int(r.headers["Retry-After"]) > 0, (method, path)
        assert r.json()["detail"], (method, path)
    server.wait_healthy(60)
    again = httpx.get(f"{server.base_url}/api/animas/{anima_id}", headers=server.headers, timeout=30)
    assert again.status_code == 200, again.text


def test_a_killed_postgres_is_started_again_by_serve(server: EmbeddedServer) -> None:
    anima_id = _anima(server)
    [before] = postmasters(server.pgdata)
    before.kill()
    before.wait(10)
    server.wait_healthy(90)
    [after] = postmasters(server.pgdata)
    assert after.pid != before.pid
    assert server.proc is not None and server.proc.poll() is None  # the same serve process
    r = httpx.get(f"{server.base_url}/api/animas/{anima_id}", headers=server.headers, timeout=30)
    assert r.status_code == 200, r.text  # its data survived
    assert "starting it again" in server.log_tail(20000)
    server.stop()  # SIGTERM: serve stops the postmaster it started again, too
    _, alive = psutil.wait_procs(postmasters(server.pgdata), timeout=15)
    assert alive == [], server.log_tail()
