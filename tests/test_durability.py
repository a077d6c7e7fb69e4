"""An acknowledged event survives the API process being killed with SIGKILL.

The server commits before it answers, so every 2xx means the row is in Postgres. The embedded
postmaster is a separate daemon and keeps running when the API process dies; a new API process
over the same database must serve every acknowledged event exactly once. Events whose request
was cut off by the kill may or may not be stored, but retrying them with their ``dedupe_key``
never duplicates them.
"""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import httpx

from elephantasm.runtime import Runtime
from tests.conftest import TEST_SECRET, make_tenant
from tests.support.servers import free_port, server_env, start_server, stop_server


def _event(anima_id: str, n: int, session: str) -> dict:
    return {
        "anima_id": anima_id,
        "event_type": "message.in" if n % 2 else "message.out",
        "content": f"durable event {n}",
        "session_id": session,
        "dedupe_key": f"{session}-{n}",
        "meta": {"n": n},
    }


async def _all_events(base: str, headers: dict[str, str], anima_id: str) -> list[dict]:
    """Every event of the anima, following cursors."""
    items: list[dict] = []
    cursor = None
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=30) as c:
        while True:
            params = {"anima_id": anima_id, "limit": 1000} | ({"cursor": cursor} if cursor else {})
            r = await c.get("/api/events", params=params)
            assert r.status_code == 200, r.text
            page = r.json()
            items += page["items"]
            cursor = page["next_cursor"]
            if not cursor:
                return items


async def _post_until_killed(
    c: httpx.AsyncClient, anima_id: str, start: int, acked: dict[str, str], cut_off: set[int], worker: int
) -> None:
    """Post events one by one until the server disappears; record what was acknowledged."""
    n = start + worker
    while True:
        try:
            r = await c.post("/api/events", json=_event(anima_id, n, "inflight"))
        except httpx.HTTPError:
            cut_off.add(n)
            return
        assert r.status_code == 201, r.text
        acked[r.json()["id"]] = f"inflight-{n}"
        n += 4


async def test_acknowledged_events_survive_sigkill(
    runtime: Runtime, pg_url: str, data_dir: Path, tmp_path: Path
) -> None:
    """~50 acknowledged events (single + batch), then SIGKILL mid-traffic, then a fresh process."""
    tenant = await make_tenant(runtime, "durable")
    env = server_env(pg_url, TEST_SECRET, data_dir)
    port = free_port()
    proc = start_server(env, port, tmp_path / "server-1.log")
    base = f"http://127.0.0.1:{port}"
    acked: dict[str, str] = {}  # event id → dedupe key
    cut_off: set[int] = set()
    try:
        async with httpx.AsyncClient(base_url=base, headers=tenant.headers, timeout=30) as c:
            r = await c.post("/api/animas", json={"name": "durable"})
            assert r.status_code == 201, r.text
            anima_id = r.json()["id"]
            for n in range(20):
                r = await c.post("/api/events", json=_event(anima_id, n, "single"))
                assert r.status_code == 201, r.text
                acked[r.json()["id"]] = f"single-{n}"
            batch = [_event(anima_id, n, "batch") for n in range(30)]
            r = await c.post("/api/events/batch", json={"events": batch})
            assert r.status_code == 201 and r.json()["created"] == 30, r.text
            acked.update({e["id"]: e["dedupe_key"] for e in r.json()["items"]})

            # Kill while four writers are mid-stream, once some of their events were acknowledged.
            writers = [asyncio.create_task(_post_until_killed(c, anima_id, 1000, acked, cut_off, w)) for w in range(4)]
            while len(acked) < 50 + 20 and not all(w.done() for w in writers):
                await asyncio.sleep(0.01)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            await asyncio.gather(*writers)
    finally:
        stop_server(proc)
    assert proc.returncode == -signal.SIGKILL

    port = free_port()
    proc = start_server(env, port, tmp_path / "server-2.log")
    base = f"http://127.0.0.1:{port}"
    try:
        stored = await _all_events(base, tenant.headers, anima_id)
        ids = [e["id"] for e in stored]
        assert len(ids) == len(set(ids)), "an event is listed twice"
        keys = [e["dedupe_key"] for e in stored]
        assert len(keys) == len(set(keys)), "an event was stored twice"
        missing = set(acked) - set(ids)
        assert not missing, f"{len(missing)} acknowledged events lost after SIGKILL"
        assert {e["id"]: e["dedupe_key"] for e in stored if e["id"] in acked} == acked

        # Retrying the requests the kill cut off stores each of them exactly once.
        async with httpx.AsyncClient(base_url=base, headers=tenant.headers, timeout=30) as c:
            for n in sorted(cut_off):
                r = await c.post("/api/events", json=_event(anima_id, n, "inflight"))
                assert r.status_code in (200, 201), r.text
        after = await _all_events(base, tenant.headers, anima_id)
        assert len(after) == len(stored) + sum(1 for n in cut_off if f"inflight-{n}" not in keys)
        assert len({e["dedupe_key"] for e in after}) == len(after)
    finally:
        stop_server(proc)
