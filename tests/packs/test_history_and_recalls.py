"""Served-pack history (bounded) and recall recording (batched, off the request path)."""

from __future__ import annotations

import dataclasses
import uuid
from datetime import timedelta

import httpx

from elephantasm.runtime import Runtime
from tests.conftest import Tenant
from tests.packs.conftest import FROZEN_NOW
from tests.packs.helpers import add_memory, extract, latest, recall_state


async def test_history_lists_and_gets_recorded_packs(pclient: httpx.AsyncClient, tenant: Tenant, panima: dict) -> None:
    await extract(pclient, tenant, panima["id"], "hello there")
    served = [(await latest(pclient, tenant, panima["id"], query=q)).json() for q in ("a", "b", "c")]
    await latest(pclient, tenant, panima["id"], query="a")  # a cache hit records nothing new
    page = (
        await pclient.get(f"/api/animas/{panima['id']}/memory-packs", params={"limit": 2}, headers=tenant.headers)
    ).json()
    assert [p["query"] for p in page["items"]] == ["c", "b"] and page["next_cursor"]
    rest = (
        await pclient.get(
            f"/api/animas/{panima['id']}/memory-packs", params={"cursor": page["next_cursor"]}, headers=tenant.headers
        )
    ).json()
    assert [p["query"] for p in rest["items"]] == ["a"] and rest["next_cursor"] is None
    one = (await pclient.get(f"/api/memory-packs/{served[1]['id']}", headers=tenant.headers)).json()
    assert one == served[1]


async def test_history_is_bounded_per_anima(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    pack_runtime.settings = pack_runtime.settings.model_copy(update={"pack_retention_per_anima": 3})
    await extract(pclient, tenant, panima["id"], "hello there")
    for i in range(6):
        await latest(pclient, tenant, panima["id"], query=f"q{i}")
    items = (await pclient.get(f"/api/animas/{panima['id']}/memory-packs", headers=tenant.headers)).json()["items"]
    assert [p["query"] for p in items] == ["q5", "q4", "q3"]


async def test_served_memories_record_recalls_once_per_bucket_without_bumping_state(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    # Only the explicit flush() below may write: a slow (loaded) machine must not let the 1 s background
    # flush run first and make the counts racy.
    pack_runtime.pack_state.recalls.interval = 3600
    memory = await add_memory(
        pack_runtime, tenant, panima["id"], "The user plays the cello.", time_end=FROZEN_NOW - timedelta(days=3)
    )
    version = (await pclient.get(f"/api/animas/{panima['id']}", headers=tenant.headers)).json()["state_version"]
    first = await latest(pclient, tenant, panima["id"])
    assert str(memory) in [m["id"] for m in first.json()["content"]["long_term_memories"]]
    assert await recall_state(pack_runtime, memory) == (0, None)  # not written on the request path
    for _ in range(3):
        await latest(pclient, tenant, panima["id"])
    assert await pack_runtime.pack_state.recalls.flush() == 1
    assert await recall_state(pack_runtime, memory) == (1, FROZEN_NOW)
    anima = (await pclient.get(f"/api/animas/{panima['id']}", headers=tenant.headers)).json()
    assert anima["state_version"] == version
    assert (await latest(pclient, tenant, panima["id"])).content == first.content  # still a cache hit

    # Another replica serving in the same bucket does not count it again; the next bucket does.
    replica = dataclasses.replace(pack_runtime, pack_state=type(pack_runtime.pack_state)())
    replica.pack_state.recalls.record(replica.engine, [memory], FROZEN_NOW.replace(minute=0), FROZEN_NOW)
    assert await replica.pack_state.recalls.flush() == 0
    later = FROZEN_NOW + timedelta(hours=1)
    replica.pack_state.recalls.record(replica.engine, [memory, uuid.uuid4()], later.replace(minute=0), later)
    assert await replica.pack_state.recalls.flush() == 1
    await replica.pack_state.aclose()
    assert await recall_state(pack_runtime, memory) == (2, later)
