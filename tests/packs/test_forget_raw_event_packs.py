"""Forgetting a memory also erases packs served before the dream made it (issue 28, item 10).

Before a dream runs, a pack shows the anima's pending events as recent turns, citing the events.
When the memory later distilled from those events is forgotten, every served pack whose items cite
any of its source events goes too, not only packs that cite the memory itself.
"""

from __future__ import annotations

import uuid

import httpx

from elephantasm.runtime import Runtime
from elephantasm.services.dreams import run_dream
from tests.conftest import Tenant
from tests.packs.helpers import extract, latest

FACT = "My locker combination is 31-07-95, keep it safe."


async def _history(client: httpx.AsyncClient, tenant: Tenant, anima_id: str) -> list[dict]:
    r = await client.get(f"/api/animas/{anima_id}/memory-packs", headers=tenant.headers)
    assert r.status_code == 200, r.text
    return list(r.json()["items"])


async def test_forgetting_a_memory_purges_packs_built_from_its_raw_events(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    anima_id = panima["id"]
    event = await extract(pclient, tenant, anima_id, FACT, session_id="s1")
    early = (await latest(pclient, tenant, anima_id, query="locker combination", session_id="s1")).json()
    assert "31-07-95" in early["context"]  # from the raw event: no memory exists yet
    assert any("31-07-95" in str(p) for p in await _history(pclient, tenant, anima_id))

    run = await run_dream(pack_runtime.dreams, tenant.org_id, uuid.UUID(anima_id), trigger="test")
    assert run.status == "completed", run.error
    memories = (await pclient.get("/api/memories", params={"anima_id": anima_id}, headers=tenant.headers)).json()
    [memory] = [m for m in memories["items"] if event["id"] in m["event_ids"]]

    r = await pclient.delete(f"/api/memories/{memory['id']}", headers=tenant.headers)
    assert r.status_code == 204, r.text
    left = await _history(pclient, tenant, anima_id)
    assert not any("31-07-95" in str(p) for p in left), left
