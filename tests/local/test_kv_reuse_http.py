"""Through ``/v1/chat/completions``: a stored snapshot whose state is another prompt's is caught by
the restore check (``X-Elephantasm-KV: recomputed``, ``/metrics``), the answer is still right, and
no restore is tried on that model afterwards."""

from __future__ import annotations

import uuid

import httpx
from sqlalchemy import update

from elephantasm.db.models import KVSnapshotRow
from elephantasm.db.tables import table_of
from elephantasm.runtime import Runtime
from elephantasm.services.kv import rows
from elephantasm.services.kv.reuse import Prompt, prime
from elephantasm.services.kv.snapshots import header, make_prefix
from tests.conftest import Tenant
from tests.local.conftest import seed_anima, system_prompt

QUESTION = [{"role": "user", "content": "Which city do I live in?"}]


async def _ask(client: httpx.AsyncClient, tenant: Tenant, anima_id: str) -> httpx.Response:
    body = {"messages": QUESTION, "user": anima_id, "temperature": 0, "max_tokens": 12}
    r = await client.post("/v1/chat/completions", json=body, headers=tenant.headers)
    assert r.status_code == 200, r.text
    return r


async def test_a_snapshot_holding_another_prompt_is_recomputed_and_reported(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, anima: dict
) -> None:
    await seed_anima(client, tenant.headers, anima["id"])
    first = await _ask(client, tenant, anima["id"])
    assert first.headers["x-elephantasm-kv"] == "miss"
    async with runtime.read_session() as session:
        (row,) = await rows.list_for(session, tenant.org_id, uuid.UUID(anima["id"]))
    assert row.meta["blocks"], "the snapshot is indexed by its prefix blocks"

    engine = await runtime.local.aengine()
    other = make_prefix(engine, engine.split_prompt(system_prompt(5), [])[0])
    with engine.lock:
        keep = lambda: header(engine, other, "other")  # noqa: E731
        blob = prime(engine, None, Prompt(other.tokens, len(other.tokens)), None, keep, reuse=False, min_new=1).blob
        engine.clear()  # nothing live: the disk snapshot is the only source
    engine.states.drop_owner(tenant.org_id)
    store = runtime.local.store
    digest = store.write(tenant.org_id, blob or b"")
    async with runtime.unit_of_work() as session:  # the row now names a file of another prompt
        t = table_of(KVSnapshotRow)
        await session.execute(update(t).where(t.c.id == row.id).values(sha256=digest, bytes=len(blob or b"")))

    try:
        second = await _ask(client, tenant, anima["id"])
        assert second.headers["x-elephantasm-kv"] == "recomputed"
        prompt_tokens = second.json()["usage"]["prompt_tokens"]
        assert int(second.headers["x-elephantasm-kv-prefilled"]) > prompt_tokens - row.n_tokens
        assert second.json()["choices"][0]["message"]["content"] == first.json()["choices"][0]["message"]["content"]
        exposed = (await client.get("/metrics")).text
        model = engine.model_name
        assert f'elephantasm_kv_restore_checks_total{{model="{model}",result="recomputed"}}' in exposed
        assert f'elephantasm_kv_reuse_disabled{{model="{model}"}} 1.0' in exposed
        gen = (
            await client.get(f"/api/generations/{second.headers['x-elephantasm-generation']}", headers=tenant.headers)
        ).json()
        assert gen["kv_status"] == "recomputed", "the row records the restore that did not reuse"

        third = await _ask(client, tenant, anima["id"])
        assert third.headers["x-elephantasm-kv"] == "off", "restores are not tried again on this model"
        assert third.headers["x-elephantasm-kv-restored"] == "0"
    finally:
        engine.reuse_ok = True  # the engine is shared by the other tests of this session
