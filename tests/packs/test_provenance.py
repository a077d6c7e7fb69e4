"""Provenance is read for the served items only, after packing, from the compile's own snapshot."""

from __future__ import annotations

import uuid
from datetime import timedelta

import httpx
from sqlalchemy import text

from elephantasm.domain.pack_trace import PackTrace
from elephantasm.runtime import Runtime
from elephantasm.services.inspector import memories_of_event
from elephantasm.services.inspector.composer import compose
from elephantasm.services.packs import build_request, compile_pack
from tests.conftest import Tenant
from tests.packs.conftest import FROZEN_NOW
from tests.packs.helpers import add_knowledge, add_memory, extract, latest

WHEN = FROZEN_NOW - timedelta(days=3)


async def _events(client: httpx.AsyncClient, tenant: Tenant, anima_id: str, n: int) -> list[str]:
    return [
        (await extract(client, tenant, anima_id, f"turn {i} about the harbour", session_id="old"))["id"]
        for i in range(n)
    ]


async def test_served_items_carry_their_sources_in_id_order(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    a = panima["id"]
    e = await _events(pclient, tenant, a, 3)
    two = await add_memory(pack_runtime, tenant, a, "The harbour opens at six.", time_end=WHEN, event_ids=[e[2], e[0]])
    one = await add_memory(
        pack_runtime, tenant, a, "The harbour has a red lighthouse.", time_end=WHEN, event_ids=[e[1], e[0]]
    )
    none = await add_memory(pack_runtime, tenant, a, "The harbour master is called Ines.", time_end=WHEN)
    # Two memories share e[0]: the knowledge item cites it once.
    fact = await add_knowledge(pack_runtime, tenant, a, "The harbour opens at six.", memory_ids=[two, one])
    r = await pclient.get(
        f"/api/animas/{a}/memory-packs/latest", params={"query": "harbour", "max_tokens": 4000}, headers=tenant.headers
    )
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
        await add_memory(
            pack_runtime,
            tenant,
            a,
            f"Harbour fact number {i}: the pier {i} is {i} metres long.",
            time_end=WHEN,
            event_ids=[event_id],
        )
    req = build_request(pack_runtime.packs, tenant.org_id, uuid.UUID(a), query="harbour pier", max_tokens=200)
    trace = PackTrace()
    composition = compose(req, (await compile_pack(pack_runtime.packs, req, trace=trace)).pack, trace)
    cut = [c for c in composition.cut() if c["kind"] == "memory"]
    assert cut, "a 200-token pack must leave some of 30 memories out"
    assert all(len(c["provenance"]) == 1 and c["provenance"][0] in events for c in cut)


async def test_an_events_memories_and_a_memorys_events_read_the_array_both_ways(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, other_tenant: Tenant, panima: dict
) -> None:
    """Provenance is each memory's ``event_ids``: the API lists a memory's events in
    time order, the inspector finds the memories of an event (not another org's), and the array is
    stored ascending whatever order the sources came in."""
    a = panima["id"]
    # Recorded in one order, happened in the other: e[2] first.
    e = [
        (await extract(pclient, tenant, a, f"turn {i}", occurred_at=(WHEN - timedelta(hours=i)).isoformat()))["id"]
        for i in range(3)
    ]
    cites = await add_memory(
        pack_runtime, tenant, a, "The harbour opens at six.", time_end=WHEN, event_ids=[e[0], e[2]]
    )
    await add_memory(pack_runtime, tenant, a, "The harbour master is called Ines.", time_end=WHEN, event_ids=[e[1]])
    r = await pclient.get(f"/api/memories/{cites}", headers=tenant.headers)
    assert r.status_code == 200 and r.json()["event_ids"] == [e[2], e[0]]  # when they happened
    r = await pclient.get(f"/api/memories/{cites}/events", headers=tenant.headers)
    assert [x["id"] for x in r.json()] == [e[2], e[0]]
    async with pack_runtime.read_session() as session:
        stored = (await session.execute(text("SELECT event_ids FROM memories WHERE id = :m"), {"m": cites})).scalar()
        of_first = await memories_of_event(session, tenant.org_id, uuid.UUID(e[0]))
        of_second = await memories_of_event(session, tenant.org_id, uuid.UUID(e[1]))
        foreign = await memories_of_event(session, other_tenant.org_id, uuid.UUID(e[0]))
    assert stored == sorted(uuid.UUID(x) for x in (e[2], e[0]))
    assert [m.id for m in of_first] == [cites] and len(of_second) == 1 and of_second[0].id != cites
    assert foreign == []
    r = await pclient.get(f"/api/memories/{cites}/events", headers=other_tenant.headers)
    assert r.status_code == 404


async def test_a_line_in_the_session_and_in_long_term_memory_is_served_once_citing_both(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    """The current session serves the line; the earlier turn and the memory made of it are its echoes."""
    a, said = panima["id"], "We planned a hiking trip to the Alps."
    old = await extract(pclient, tenant, a, said, session_id="old", occurred_at=(WHEN - timedelta(days=9)).isoformat())
    now = await extract(pclient, tenant, a, said, session_id="new")
    await add_memory(pack_runtime, tenant, a, f"user: {said}", time_end=WHEN - timedelta(days=9), event_ids=[old["id"]])
    pack = (await latest(pclient, tenant, a, query="hiking trip", max_tokens=1000)).json()
    assert pack["context"].count(said) == 1
    assert said in pack["context"].split("## Current session")[1]
    assert [(m["id"], m["provenance"]) for m in pack["content"]["session_memories"]] == [
        (now["id"], sorted([old["id"], now["id"]]))
    ]
    assert pack["content"]["long_term_memories"] == []
