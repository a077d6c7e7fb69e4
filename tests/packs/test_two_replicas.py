"""No stale pack across replicas: two ``serve`` processes over one database, writes on one, reads on
the other. Each replica keeps its own in-process snapshot LRU; the pack key carries the anima's
``state_version``, read on every request, so an acknowledged write on replica A is never answered
with the old pack by replica B — not even one B has just served and cached, nor by a 304."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import TEST_SECRET, Tenant
from tests.support.servers import free_port, server_env, start_server, stop_server


@pytest.fixture
def replicas(pg_url: str, data_dir: Path) -> Iterator[tuple[str, str]]:
    """Two API processes over the test database (auth cache on, as in production)."""
    procs, urls = [], []
    try:
        for name in ("a", "b"):
            port = free_port()
            env = server_env(pg_url, TEST_SECRET, data_dir, ELEPHANTASM_AUTH_CACHE_SECONDS="5")
            procs.append(start_server(env, port, data_dir / f"replica-{name}.log"))
            urls.append(f"http://127.0.0.1:{port}")
        yield urls[0], urls[1]
    finally:
        for proc in procs:
            stop_server(proc)


async def test_a_write_on_one_replica_is_never_answered_with_the_old_pack_by_the_other(
    replicas: tuple[str, str], tenant: Tenant
) -> None:
    url_a, url_b = replicas
    async with (
        httpx.AsyncClient(base_url=url_a, headers=tenant.headers, timeout=30) as a,
        httpx.AsyncClient(base_url=url_b, headers=tenant.headers, timeout=30) as b,
    ):
        anima_id = (await a.post("/api/animas", json={"name": "replicated"})).json()["id"]
        latest = f"/api/animas/{anima_id}/memory-packs/latest"
        first = {"anima_id": anima_id, "event_type": "message.in", "content": "I keep bees on the roof"}
        assert (await a.post("/api/events", json=first)).status_code == 201
        for i in range(6):
            before = await b.get(latest, params={"query": "bees"})
            assert before.status_code == 200
            again = await b.get(latest, params={"query": "bees"}, headers={"If-None-Match": before.headers["etag"]})
            assert again.status_code == 304  # B has it cached
            event = {"anima_id": anima_id, "event_type": "message.in", "content": f"hive number {i} swarmed"}
            if i % 2:
                write = await a.post("/api/events/batch", json={"events": [event]})
            else:
                write = await a.post("/api/events", json=event)
            assert write.status_code == 201
            version = (await a.get(f"/api/animas/{anima_id}")).json()["state_version"]
            after = await b.get(latest, params={"query": "bees"}, headers={"If-None-Match": before.headers["etag"]})
            assert after.status_code == 200, f"round {i}: replica B answered 304 after a write on A"
            assert after.json()["state_version"] == version
            assert f"hive number {i} swarmed" in after.json()["context"]
