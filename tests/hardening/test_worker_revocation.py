"""``serve --workers 2``: a key revoked through one worker is refused by every worker within the
documented bound (``auth_cache_seconds``), though each had it cached as valid.

Each worker is reached over a kept-alive connection of its own (``/api/health`` names the pid
that answered), so the test knows which process each request hit."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx
import pytest

from benchmarks import harness
from elephantasm.settings import Settings
from tests.conftest import TEST_SECRET, make_tenant
from tests.support.databases import own_runtime
from tests.support.servers import free_port, server_env, stop_server

TTL_SECONDS = 2.0


async def _one_connection_per_worker(base: str, workers: int) -> dict[int, httpx.AsyncClient]:
    """A client per worker pid, each pinned to its one connection (a pool of one, kept alive)."""
    found: dict[int, httpx.AsyncClient] = {}
    deadline = time.monotonic() + 120
    while len(found) < workers and time.monotonic() < deadline:
        http = httpx.AsyncClient(base_url=base, limits=httpx.Limits(max_connections=1), timeout=30)
        r = await http.get("/api/health")
        pid = r.json()["pid"] if r.status_code == 200 else None
        if pid is None or pid in found:
            await http.aclose()
            await asyncio.sleep(0.05)
            continue
        found[pid] = http
    assert len(found) == workers, f"only workers {sorted(found)} answered"
    return found


async def _pid_of(http: httpx.AsyncClient) -> int:
    return (await http.get("/api/health")).json()["pid"]


@pytest.mark.slow
async def test_a_key_revoked_on_one_worker_is_refused_by_every_worker_within_the_cache_ttl(
    pg_url: str, settings: Settings, data_dir: Path, tmp_path: Path
) -> None:
    async with own_runtime(pg_url, settings, "revoke") as runtime:
        admin = await make_tenant(runtime, "revoker")
        url = str(runtime.settings.database_url)
        env = server_env(url, TEST_SECRET, data_dir, ELEPHANTASM_AUTH_CACHE_SECONDS=str(TTL_SECONDS))
        port = free_port()
        proc = await asyncio.to_thread(
            harness.start_server, env, port, tmp_path / "serve.log", 180, ("--workers", "2", "--no-dreamer")
        )
        try:
            workers = await _one_connection_per_worker(f"http://127.0.0.1:{port}", 2)
            first = next(iter(workers.values()))
            minted = await first.post("/api/keys/", json={"name": "doomed"}, headers=admin.headers)
            assert minted.status_code == 201, minted.text
            doomed = {"Authorization": f"Bearer {minted.json()['key']}"}
            for http in workers.values():  # every worker has verified (and cached) the key
                assert (await http.get("/api/animas", headers=doomed)).status_code == 200

            revoked = await first.delete(f"/api/keys/{minted.json()['id']}", headers=admin.headers)
            assert revoked.status_code == 204, revoked.text
            assert (await first.get("/api/animas", headers=doomed)).status_code == 401, "the revoking worker: at once"

            await asyncio.sleep(TTL_SECONDS + 0.5)
            for pid, http in workers.items():
                statuses = [(await http.get("/api/animas", headers=doomed)).status_code for _ in range(5)]
                assert statuses == [401] * 5, (pid, statuses)
                assert await _pid_of(http) == pid, "the pinned connection still reaches the same worker"
                await http.aclose()
        finally:
            stop_server(proc)
