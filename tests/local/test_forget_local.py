"""Forgetting reaches the local model's memory: a deleted memory's text leaves the KV snapshots
built from packs that held it (rows and files) and the prompts recorded with generations."""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from functools import partial
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from elephantasm.domain.kv.snapshot import decode_snapshot
from elephantasm.local.sampling import Sampling
from elephantasm.runtime import Runtime
from elephantasm.services.dreams import run_dream
from elephantasm.services.kv import packages, snapshots
from elephantasm.services.kv.packages import certify
from elephantasm.services.kv.prefix import pack_prompt
from elephantasm.services.kv.reuse import Prompt, in_memory
from elephantasm.services.kv.snapshots import header
from tests.conftest import Tenant
from tests.local.conftest import planned_stream, seed_anima
from tests.support.pausing import while_paused

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


def _prefix_texts(runtime: Runtime, org_id: uuid.UUID) -> list[str]:
    """The prefix text of every snapshot file the org has on disk."""
    folder = runtime.local.store.root / str(org_id)
    return [decode_snapshot(f.read_bytes())[0]["prefix_text"] for f in folder.rglob("*.kvs")]


async def test_a_memory_forgotten_while_a_reply_is_generated_is_in_nothing_written_or_served_after(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, anima: dict
) -> None:
    """The turn's snapshot and generation record are written after the reply, from a pack compiled
    before it: a deletion acknowledged meanwhile must keep them from holding the memory."""
    await seed_anima(client, tenant.headers, anima["id"])
    assert (
        await run_dream(runtime.dreams, tenant.org_id, uuid.UUID(anima["id"]), trigger="test")
    ).status == "completed"
    listed = (await client.get("/api/memories", params={"anima_id": anima["id"]}, headers=tenant.headers)).json()
    engine = await runtime.local.aengine()
    question = [{"role": "user", "content": "Where do I live?"}]
    plan, stream = await planned_stream(
        runtime, engine, tenant, anima["id"], question, Sampling(seed=1, temperature=0.0, max_tokens=16)
    )
    memory_id, rendered, _ = next(it for it in plan.pack.items if it[0] in {m["id"] for m in listed["items"]})
    await stream.start()
    pieces = stream.pieces()
    await anext(pieces)  # the reply is under way; the turn is recorded once it ends
    assert (await client.delete(f"/api/memories/{memory_id}", headers=tenant.headers)).status_code == 204
    async for _ in pieces:
        pass

    snapshots = await _rows(runtime, _SNAPSHOT_ROWS, anima["id"])
    assert all(memory_id not in row.meta and rendered not in row.meta for row in snapshots)
    assert all(rendered not in text for text in _prefix_texts(runtime, tenant.org_id)), "no file holds it"
    ((prompt,),) = await _rows(runtime, _PROMPTS, anima["id"])
    assert rendered not in prompt["prefix"], "the turn's recorded prompt does not hold it either"

    chat = {"messages": question, "user": anima["id"], "max_tokens": 4}
    r = await client.post("/v1/chat/completions", json=chat, headers=tenant.headers)
    assert r.status_code == 200 and r.headers["x-elephantasm-kv"] == "miss", "nothing computed from it is reused"
    assert all(rendered not in p["prefix"] for (p,) in await _rows(runtime, _PROMPTS, anima["id"]))
    r = await client.post("/api/packs/compile", json={"anima_id": anima["id"]}, headers=tenant.headers)
    assert r.status_code == 200 and memory_id not in r.text and rendered not in r.json()["context"]


async def _forget(client: httpx.AsyncClient, tenant: Tenant, memory_id: str) -> None:
    assert (await client.delete(f"/api/memories/{memory_id}", headers=tenant.headers)).status_code == 204


async def test_a_package_exported_while_its_memory_is_forgotten_is_not_handed_out(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, anima: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An export reads the snapshot, then measures it with the model: a deletion acknowledged
    meanwhile took the snapshot, so the package (its prefix text, its state) is not served."""
    aid = uuid.UUID(anima["id"])
    await seed_anima(client, tenant.headers, anima["id"])
    assert (await run_dream(runtime.dreams, tenant.org_id, aid, trigger="test")).status == "completed"
    pack = await pack_prompt(runtime.chat_packs, tenant.org_id, aid, "Where do I live?")
    _, row = await snapshots.build(runtime.unit_of_work, runtime.local, runtime.clock, tenant.org_id, aid, pack)
    assert row is not None
    listed = (await client.get("/api/memories", params={"anima_id": anima["id"]}, headers=tenant.headers)).json()
    memory_id = next(it[0] for it in pack.items if it[0] in {m["id"] for m in listed["items"]})
    loop, measuring, go_on = asyncio.get_running_loop(), asyncio.Event(), threading.Event()

    def paused(*args: Any) -> dict[str, Any]:
        loop.call_soon_threadsafe(measuring.set)
        go_on.wait()
        return certify(*args)

    monkeypatch.setattr(packages, "certify", paused)
    export = asyncio.ensure_future(
        client.get(f"/api/kv-snapshots/{row.id}/package", params={"probes": 1}, headers=tenant.headers)
    )
    forget = partial(_forget, client, tenant, memory_id)
    await while_paused(export, measuring, "the export has read the snapshot and is measuring it", forget, go_on.set)
    r = await export
    assert r.status_code == 404 and str(row.id) in r.json()["detail"], r.text[:200]


async def test_a_memory_forgotten_while_the_prompt_is_evaluated_leaves_no_kv_state_to_reuse(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, anima: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Forgetting drops the KV states the process holds for the org; a prompt being evaluated
    at that moment must not become one afterwards (the live cache the next turn builds on)."""
    aid = uuid.UUID(anima["id"])
    await seed_anima(client, tenant.headers, anima["id"])
    assert (await run_dream(runtime.dreams, tenant.org_id, aid, trigger="test")).status == "completed"
    listed = (await client.get("/api/memories", params={"anima_id": anima["id"]}, headers=tenant.headers)).json()
    engine = await runtime.local.aengine()
    question = [{"role": "user", "content": "Where do I live?"}]
    plan, stream = await planned_stream(
        runtime, engine, tenant, anima["id"], question, Sampling(seed=1, temperature=0.0, max_tokens=4)
    )
    memory_id = next(it[0] for it in plan.pack.items if it[0] in {m["id"] for m in listed["items"]})
    loop, priming, go_on = asyncio.get_running_loop(), asyncio.Event(), threading.Event()

    def paused(*args: Any) -> dict[str, Any]:  # called once the system turn is in the cache
        loop.call_soon_threadsafe(priming.set)
        go_on.wait()
        return header(*args)

    monkeypatch.setattr(snapshots, "header", paused)
    started = asyncio.ensure_future(stream.start())
    forget = partial(_forget, client, tenant, memory_id)
    await while_paused(started, priming, "the prompt is being evaluated", forget, go_on.set)
    await started
    async for _ in stream.pieces():
        pass
    held = engine.held()
    assert in_memory(engine, tenant.org_id, Prompt(held, len(held)), need_logits=False) is None, "no KV state of it"
    chat = {"messages": question, "user": anima["id"], "max_tokens": 4}
    r = await client.post("/v1/chat/completions", json=chat, headers=tenant.headers)
    assert r.status_code == 200 and r.headers["x-elephantasm-kv"] == "miss", "nothing computed from it is reused"
