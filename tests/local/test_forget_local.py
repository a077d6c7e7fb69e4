"""Forgetting reaches the local model's memory: a deleted memory's text leaves the KV snapshots
built from packs that held it (rows and files) and the prompts recorded with generations."""

from __future__ import annotations

import json
import uuid

import httpx
from sqlalchemy import text

from elephantasm.runtime import Runtime
from elephantasm.services.dreams import run_dream
from tests.conftest import Tenant
from tests.local.conftest import seed_anima

_SNAPSHOT_ROWS = text("SELECT id, sha256, meta::text AS meta FROM kv_snapshots WHERE anima_id = :a")
_PROMPTS = text("SELECT prompt FROM generations WHERE anima_id = :a")


async def _rows(runtime: Runtime, stmt, anima_id: str) -> list:  # type: ignore[no-untyped-def]
    async with runtime.read_session() as session:
        return list((await session.execute(stmt, {"a": uuid.UUID(anima_id)})).all())


async def test_deleting_a_memory_erases_it_from_kv_snapshots_and_recorded_prompts(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, anima: dict
) -> None:
    await seed_anima(client, tenant.headers, anima["id"])
    assert (
        await run_dream(runtime.dreams, tenant.org_id, uuid.UUID(anima["id"]), trigger="test")
    ).status == "completed"
    chat = {"messages": [{"role": "user", "content": "Where do I live?"}], "user": anima["id"], "max_tokens": 4}
    r = await client.post("/v1/chat/completions", json=chat, headers=tenant.headers)
    assert r.status_code == 200, r.text
    generation = r.headers["x-elephantasm-generation"]

    (snapshot,) = await _rows(runtime, _SNAPSHOT_ROWS, anima["id"])
    listed = (await client.get("/api/memories", params={"anima_id": anima["id"]}, headers=tenant.headers)).json()
    memory_ids = {m["id"] for m in listed["items"]}
    # The first memory the chat pack rendered, and its line as rendered (what the prompt holds).
    memory_id, rendered, _ = next(it for it in json.loads(snapshot.meta)["items"] if it[0] in memory_ids)
    store = runtime.local.store
    assert store.read(tenant.org_id, snapshot.sha256) is not None
    ((prompt,),) = await _rows(runtime, _PROMPTS, anima["id"])
    assert rendered in prompt["prefix"]

    assert (await client.delete(f"/api/memories/{memory_id}", headers=tenant.headers)).status_code == 204

    assert await _rows(runtime, _SNAPSHOT_ROWS, anima["id"]) == [], "the snapshot held the memory: gone"
    assert store.read(tenant.org_id, snapshot.sha256) is None, "and its file with it"
    ((prompt,),) = await _rows(runtime, _PROMPTS, anima["id"])
    assert prompt["forgotten"] is True and rendered not in prompt["prefix"]
    assert prompt["suffix"], "the user's own turn is the client's record: kept"
    r = await client.post(f"/api/generations/{generation}/replay", headers=tenant.headers)
    assert r.status_code == 409 and "forgotten" in r.json()["detail"]

    r = await client.post("/v1/chat/completions", json=chat, headers=tenant.headers)
    assert r.status_code == 200 and r.headers["x-elephantasm-kv"] == "miss", "rebuilt without the memory"
