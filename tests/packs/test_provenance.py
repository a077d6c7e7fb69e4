"""Provenance is read for the served items only, after packing, from the compile's own snapshot."""

from __future__ import annotations

import uuid
from datetime import timedelta

import httpx

from elephantasm.runtime import Runtime
from elephantasm.services.inspector.composer import compose
from elephantasm.services.packs import build_request
from tests.conftest import Tenant
from tests.packs.conftest import FROZEN_NOW
from tests.packs.helpers import add_knowledge, add_memory, extract


WHEN = FROZEN_NOW - timedelta(days=3)


async def _events(client: httpx.AsyncClient, tenant: Tenant, anima_id: str, n: int) -> list[str]:
    return [(await extract(client, tenant, anima_id, f"turn {i} about the harbour", session_id="old"))["id"]
            for i in range(n)]


async def test_served_items_carry_their_sources_in_id_order(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    a = panima["id"]
    e = await _events(pclient, tenant, a, 3)
    two = await add_memory(pack_runtime, tenant, a, "The harbour opens at six.", time_end=WHEN, event_ids=[e[2], e[0]])
    one = await add_memory(pack_runtime, tenant, a, "The harbour has a red lighthouse.", time_end=WHEN,
                           event_ids=[e[1], e[0]])
    none = await add_memory(pack_runtime, tenant, a, "The harbour master is called Ines.", time_end=WHEN)
    # Two memories share e[0]: the knowledge item cites it once.
    fact = await add_knowledge(pack_runtime, tenant, a, "The harbour opens at six.", memory_ids=[two, one])
    r = await pclient.get(f"/api/animas/{a}/memory-packs/latest", params={"query": "harbour", "max_tokens": 4000},
                          headers=tenant.headers)
    assert r.status_code == 200, r.text
    content = r.json()["content"]
    served = {m["id"]: m["provenance"] for m in content["long_term_memories"] if m["kind"] == "memory"}
    assert served == {str(two): sorted([e[2], e[0]]), str(one): sorted([e[1], e[0]]), str(none): []}
    assert [(k["id"], k["provenance"]) for k in content["knowledge"]] == [(str(fact), sorted(e))]


async def test_a_traced_compile_gives_cut_candidates_their_sources_too(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    a = panima["id"]
    events = await _events(pclient, tenant, a, 30)
    for i, event_id in enumerate(events):
        await add_memory(pack_runtime, tenant, a, f"Harbour fact number {i}: the pier {i} is {i} metres long.",
                         time_end=WHEN, event_ids=[event_id])
    req = build_request(pack_runtime, tenant.org_id, uuid.UUID(a), query="harbour pier", max_tokens=200)
    composition = await compose(pack_runtime, req)
    cut = [c for c in composition.cut() if c["kind"] == "memory"]
    assert cut, "a 200-token pack must leave some of 30 memories out"
    assert all(len(c["provenance"]) == 1 and c["provenance"][0] in events for c in cut)
