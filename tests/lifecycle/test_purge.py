"""Hard purge of an anima (issue 11, item 4): every row of it goes, and the purge hooks run."""

from __future__ import annotations

import uuid
from pathlib import Path

import httpx
from sqlalchemy.ext.asyncio import AsyncSession

from elephantasm.runtime import Runtime
from tests.conftest import Tenant
from tests.lifecycle.helpers import populated_anima, rows_of
from tests.support.cli import run_cli


async def test_purge_removes_every_row_and_snapshot_of_the_anima(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, other_tenant: Tenant
) -> None:
    anima_id = await populated_anima(client, runtime, tenant)
    keep = await populated_anima(client, runtime, tenant, name="bystander")
    before = await rows_of(runtime, anima_id)
    for table in (
        "events",
        "memories",
        "knowledge",
        "knowledge_memories",
        "identities",
        "identity_history",
        "memory_packs",
        "pack_snapshots",
        "dream_runs",
        "dream_actions",
    ):
        assert before[table] > 0, (table, before)
    called: list[tuple[uuid.UUID, uuid.UUID, int]] = []

    async def hook(session: AsyncSession, org_id: uuid.UUID, purged: uuid.UUID) -> None:
        called.append((org_id, purged, (await rows_of(runtime, str(purged)))["events"]))

    runtime.anima_purge_hooks.append(hook)
    try:
        r = await client.delete(f"/api/animas/{anima_id}", params={"purge": "true"}, headers=other_tenant.headers)
        assert r.status_code == 404
        r = await client.delete(f"/api/animas/{anima_id}", params={"purge": "true"}, headers=tenant.headers)
        assert r.status_code == 204, r.text
    finally:
        runtime.anima_purge_hooks.remove(hook)

    assert set((await rows_of(runtime, anima_id)).values()) == {0}
    assert called == [(tenant.org_id, uuid.UUID(anima_id), before["events"])]  # before the rows went
    assert all(anima_id.encode() not in e.body for e in runtime.pack_state.lru._entries.values())
    assert (await client.get(f"/api/animas/{anima_id}", headers=tenant.headers)).status_code == 404
    r = await client.delete(f"/api/animas/{anima_id}", params={"purge": "true"}, headers=tenant.headers)
    assert r.status_code == 404
    assert (await rows_of(runtime, keep))["events"] == before["events"]  # another anima is untouched


async def test_a_soft_deleted_anima_can_still_be_purged(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    r = await client.post("/api/animas", json={"name": "soft"}, headers=tenant.headers)
    anima_id = r.json()["id"]
    body = {"anima_id": anima_id, "event_type": "message.in", "content": "erase me"}
    assert (await client.post("/api/events", json=body, headers=tenant.headers)).status_code == 201
    assert (await client.delete(f"/api/animas/{anima_id}", headers=tenant.headers)).status_code == 204
    assert (await rows_of(runtime, anima_id))["events"] == 1  # soft: kept for recovery
    r = await client.delete(f"/api/animas/{anima_id}?purge=true", headers=tenant.headers)
    assert r.status_code == 204, r.text
    assert set((await rows_of(runtime, anima_id)).values()) == {0}


async def test_a_failing_hook_aborts_the_purge(client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant) -> None:
    r = await client.post("/api/animas", json={"name": "stubborn"}, headers=tenant.headers)
    anima_id = r.json()["id"]

    async def broken(session: AsyncSession, org_id: uuid.UUID, purged: uuid.UUID) -> None:
        raise OSError("snapshot volume not mounted")

    runtime.anima_purge_hooks.append(broken)
    try:
        r = await client.delete(f"/api/animas/{anima_id}?purge=true", headers=tenant.headers)
        # A storage failure outside the database is temporary unavailability, said as such
        # (503 + Retry-After, api/errors.py), not "the database is unavailable".
        assert r.status_code == 503 and "Retry-After" in r.headers
        assert "storage" in r.json()["detail"] and "database" not in r.json()["detail"]
    finally:
        runtime.anima_purge_hooks.remove(broken)
    assert (await rows_of(runtime, anima_id))["animas"] == 1  # nothing went: the purge can be retried
    assert (await client.delete(f"/api/animas/{anima_id}?purge=true", headers=tenant.headers)).status_code == 204


async def test_cli_purge(
    pg_url: str, data_dir: Path, client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    anima_id = (await client.post("/api/animas", json={"name": "cli"}, headers=tenant.headers)).json()["id"]
    body = {"anima_id": anima_id, "event_type": "message.in", "content": "erase me too"}
    assert (await client.post("/api/events", json=body, headers=tenant.headers)).status_code == 201
    done = run_cli(pg_url, data_dir, "animas", "purge", anima_id, "--yes")
    assert done.returncode == 0, done.stderr
    assert "1 events" in done.stdout
    assert set((await rows_of(runtime, anima_id)).values()) == {0}
    missing = run_cli(pg_url, data_dir, "animas", "purge", anima_id, "--yes")
    assert missing.returncode == 1 and anima_id in missing.stderr
    refused = run_cli(pg_url, data_dir, "animas", "purge", str(uuid.uuid4()))
    assert refused.returncode == 2 and "--yes" in refused.stderr
