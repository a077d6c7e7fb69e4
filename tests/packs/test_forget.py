"""Deleting a memory or a knowledge item really forgets it (issue 11, item 4).

What was derived only from the deleted item goes with it (knowledge whose every source memory is
gone, the identity's evidence of it), and no served pack, snapshot, journal entry or stored row
keeps its text; only the raw events (the client's own log) remain.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from elephantasm.runtime import Runtime
from elephantasm.services.dreams import run_dream
from elephantasm.services.packs.compiler import compile_pack
from tests.conftest import Tenant
from tests.dreams.helpers import add_events, turns
from tests.packs.helpers import add_knowledge, add_memory, latest
from tests.support.pausing import while_paused

SECRET = "teal"
CHAT = [
    "Hi! I live in Paris and my favorite color is teal.",
    "Nice to meet you. Paris is lovely; teal is a calm colour.",
]
LATER = ["Please remember I prefer trains over planes.", "Noted: trains over planes."]

# Every place a derived copy of the text could survive (events are the client's raw log: kept).
_TRACES = text("""
SELECT 'memories', count(*) FROM memories WHERE anima_id = :a AND (summary || coalesce(content, '')) ILIKE :p
UNION ALL SELECT 'knowledge', count(*) FROM knowledge
    WHERE anima_id = :a AND (content || coalesce(summary, '') || meta::text) ILIKE :p
UNION ALL SELECT 'memory_packs', count(*) FROM memory_packs WHERE anima_id = :a AND content::text ILIKE :p
UNION ALL SELECT 'pack_snapshots', count(*) FROM pack_snapshots WHERE anima_id = :a AND payload::text ILIKE :p
UNION ALL SELECT 'dream_actions', count(*) FROM dream_actions
    WHERE anima_id = :a AND (coalesce(befores::text, '') || coalesce(afters::text, '')) ILIKE :p
""")


async def traces(runtime: Runtime, anima_id: uuid.UUID | str, needle: str) -> dict[str, int]:
    """Rows per table (events excepted) whose text still contains ``needle``."""
    async with runtime.read_session() as session:
        rows = (await session.execute(_TRACES, {"a": uuid.UUID(str(anima_id)), "p": f"%{needle}%"})).all()
    return {table: n for table, n in rows if n}


async def _memory_with(client: httpx.AsyncClient, tenant: Tenant, anima_id: str, needle: str) -> dict:
    items = (await client.get("/api/memories", params={"anima_id": anima_id}, headers=tenant.headers)).json()["items"]
    (hit,) = [m for m in items if needle in (m["summary"] + (m["content"] or "")).lower()]
    return hit


async def _knowledge(client: httpx.AsyncClient, tenant: Tenant, anima_id: str) -> list[dict]:
    r = await client.get(
        "/api/knowledge", params={"anima_id": anima_id, "include_superseded": "true"}, headers=tenant.headers
    )
    assert r.status_code == 200, r.text
    return r.json()["items"]


async def test_deleting_a_memory_forgets_what_was_derived_only_from_it(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    anima_id = panima["id"]
    await add_events(pack_runtime, tenant.org_id, uuid.UUID(anima_id), turns(CHAT))
    first = await run_dream(pack_runtime.dreams, tenant.org_id, uuid.UUID(anima_id), trigger="test")
    await add_events(pack_runtime, tenant.org_id, uuid.UUID(anima_id), turns(LATER, session="s2"))
    assert (
        await run_dream(pack_runtime.dreams, tenant.org_id, uuid.UUID(anima_id), trigger="test")
    ).status == "completed"
    memory = await _memory_with(pclient, tenant, anima_id, SECRET)
    derived = [k for k in await _knowledge(pclient, tenant, anima_id) if k["memory_ids"] == [memory["id"]]]
    assert any(SECRET in k["content"].lower() for k in derived)
    kept = [k for k in await _knowledge(pclient, tenant, anima_id) if "train" in k["content"].lower()]
    pack = (await latest(pclient, tenant, anima_id, query="what colour does the user like")).json()
    assert SECRET in pack["context"].lower()
    identity = (await pclient.get(f"/api/identities/anima/{anima_id}", headers=tenant.headers)).json()
    version = (await pclient.get(f"/api/animas/{anima_id}", headers=tenant.headers)).json()["state_version"]

    r = await pclient.delete(f"/api/memories/{memory['id']}", headers=tenant.headers)
    assert r.status_code == 204, r.text

    after = (await pclient.get(f"/api/animas/{anima_id}", headers=tenant.headers)).json()["state_version"]
    assert after > version
    for k in derived:
        assert (await pclient.get(f"/api/knowledge/{k['id']}", headers=tenant.headers)).status_code == 404
    assert kept
    for k in kept:
        assert (await pclient.get(f"/api/knowledge/{k['id']}", headers=tenant.headers)).status_code == 200
    new_pack = (await latest(pclient, tenant, anima_id, query="what colour does the user like")).json()
    assert SECRET not in new_pack["context"].lower() and "train" in new_pack["context"].lower()
    assert (await pclient.get(f"/api/memory-packs/{pack['id']}", headers=tenant.headers)).status_code == 404
    history = (await pclient.get(f"/api/animas/{anima_id}/memory-packs", headers=tenant.headers)).json()["items"]
    assert history and all(SECRET not in p["context"].lower() for p in history)
    journal = await pclient.get(f"/api/dreams/sessions/{first.id}", headers=tenant.headers)
    assert journal.status_code == 200 and SECRET not in journal.text.lower()
    assert all(SECRET.encode() not in e.body.lower() for e in pack_runtime.pack_state.lru._entries.values())
    assert await traces(pack_runtime, anima_id, SECRET) == {}
    # The identity keeps no evidence of the forgotten knowledge: its topic counts drop it.
    now = (await pclient.get(f"/api/identities/anima/{anima_id}", headers=tenant.headers)).json()
    before = Counter(identity["self"]["topics"])
    learnt = Counter(k["topic"] for k in derived if k["type"] in ("FACT", "EXPERIENCE"))
    assert learnt and not learnt - before
    assert now["self"]["topics"] == dict(before - learnt) and now["version"] == identity["version"]


async def test_knowledge_with_another_live_source_survives_memory_deletion(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    from tests.packs.conftest import FROZEN_NOW

    a = await add_memory(pack_runtime, tenant, panima["id"], "User said they like jazz.", time_end=FROZEN_NOW)
    b = await add_memory(pack_runtime, tenant, panima["id"], "User repeated: jazz is great.", time_end=FROZEN_NOW)
    shared = await add_knowledge(pack_runtime, tenant, panima["id"], "User likes jazz.", memory_ids=[a, b])
    only_a = await add_knowledge(pack_runtime, tenant, panima["id"], "User hums jazz.", memory_ids=[a])
    assert (await pclient.delete(f"/api/memories/{a}", headers=tenant.headers)).status_code == 204
    assert (await pclient.get(f"/api/knowledge/{shared}", headers=tenant.headers)).status_code == 200
    assert (await pclient.get(f"/api/knowledge/{only_a}", headers=tenant.headers)).status_code == 404
    assert await traces(pack_runtime, panima["id"], "hums jazz") == {}


async def test_delete_knowledge_route(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, other_tenant: Tenant, panima: dict
) -> None:
    from tests.packs.conftest import FROZEN_NOW

    m = await add_memory(pack_runtime, tenant, panima["id"], "User mentioned a pet.", time_end=FROZEN_NOW)
    kid = await add_knowledge(pack_runtime, tenant, panima["id"], "User owns a parrot named Kiwi.", memory_ids=[m])
    pack = (await latest(pclient, tenant, panima["id"])).json()
    assert "Kiwi" in pack["context"]
    version = (await pclient.get(f"/api/animas/{panima['id']}", headers=tenant.headers)).json()["state_version"]

    assert (await pclient.delete(f"/api/knowledge/{kid}", headers=other_tenant.headers)).status_code == 404
    bad = await pclient.delete("/api/knowledge/not-a-uuid", headers=tenant.headers)
    assert bad.status_code == 422 and "knowledge_id" in bad.json()["detail"]
    assert (await pclient.delete(f"/api/knowledge/{kid}", headers=tenant.headers)).status_code == 204
    assert (await pclient.delete(f"/api/knowledge/{kid}", headers=tenant.headers)).status_code == 404
    assert (await pclient.get(f"/api/knowledge/{kid}", headers=tenant.headers)).status_code == 404
    assert (await pclient.get(f"/api/memories/{m}", headers=tenant.headers)).status_code == 200  # sources stay
    anima = (await pclient.get(f"/api/animas/{panima['id']}", headers=tenant.headers)).json()
    assert anima["state_version"] > version
    assert "Kiwi" not in (await latest(pclient, tenant, panima["id"])).json()["context"]
    assert (await pclient.get(f"/api/memory-packs/{pack['id']}", headers=tenant.headers)).status_code == 404
    assert await traces(pack_runtime, panima["id"], "Kiwi") == {}


async def test_a_pack_compiled_before_a_deletion_is_never_recorded(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    from elephantasm.services import packs
    from tests.packs.conftest import FROZEN_NOW

    await add_memory(pack_runtime, tenant, panima["id"], "User rides a red bicycle.", time_end=FROZEN_NOW)
    m = await add_memory(pack_runtime, tenant, panima["id"], "User's locker code is 4711.", time_end=FROZEN_NOW)
    req = packs.build_request(pack_runtime.packs, tenant.org_id, uuid.UUID(panima["id"]))
    served = await packs.latest(pack_runtime.packs, req)  # compiled and served, not yet recorded
    assert b"4711" in served.body and served.followup is not None
    assert (await pclient.delete(f"/api/memories/{m}", headers=tenant.headers)).status_code == 204
    await served.followup()  # the response's background write runs after the deletion committed
    assert await traces(pack_runtime, panima["id"], "4711") == {}
    fresh = await latest(pclient, tenant, panima["id"])
    assert "4711" not in fresh.text and "bicycle" in fresh.text
    history = (await pclient.get(f"/api/animas/{panima['id']}/memory-packs", headers=tenant.headers)).json()
    assert [p["id"] for p in history["items"]] == [fresh.json()["id"]]


async def test_a_pack_compiled_while_its_memory_is_forgotten_is_kept_nowhere(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A compile that read the memory before the deletion committed finishes after it: the request
    that asked gets it (it came first), but neither the process's cache nor the shared tier keeps it."""
    from elephantasm.services.packs import service
    from tests.packs.conftest import FROZEN_NOW

    await add_memory(pack_runtime, tenant, panima["id"], "User rides a red bicycle.", time_end=FROZEN_NOW)
    m = await add_memory(pack_runtime, tenant, panima["id"], "User's locker code is 4711.", time_end=FROZEN_NOW)
    compiled, go_on = asyncio.Event(), asyncio.Event()

    async def paused(*args: Any) -> Any:
        pack = await compile_pack(*args)
        compiled.set()
        await go_on.wait()
        return pack

    monkeypatch.setattr(service, "compile_pack", paused)
    first = asyncio.ensure_future(latest(pclient, tenant, panima["id"]))

    async def forget() -> None:
        assert (await pclient.delete(f"/api/memories/{m}", headers=tenant.headers)).status_code == 204

    await while_paused(first, compiled, "the pack is compiled, not yet cached or recorded", forget, go_on.set)
    assert "4711" in (await first).text, "asked before the deletion was acknowledged"

    assert all(b"4711" not in e.body for e in pack_runtime.pack_state.lru._entries.values())
    assert await traces(pack_runtime, panima["id"], "4711") == {}
    fresh = await latest(pclient, tenant, panima["id"])
    assert "4711" not in fresh.text and "bicycle" in fresh.text


async def test_concurrent_deletes_of_one_memory_forget_it_once(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    import asyncio

    from tests.packs.conftest import FROZEN_NOW

    m = await add_memory(pack_runtime, tenant, panima["id"], "User's spare key is under the mat.", time_end=FROZEN_NOW)
    before = (await pclient.get(f"/api/animas/{panima['id']}", headers=tenant.headers)).json()["state_version"]
    answers = await asyncio.gather(*(pclient.delete(f"/api/memories/{m}", headers=tenant.headers) for _ in range(3)))
    assert sorted(r.status_code for r in answers) == [204, 404, 404]
    after = (await pclient.get(f"/api/animas/{panima['id']}", headers=tenant.headers)).json()["state_version"]
    assert after == before + 1


async def test_editing_a_memorys_text_withdraws_every_served_copy_of_the_old_text(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    from tests.packs.conftest import FROZEN_NOW

    wrong = await add_memory(pack_runtime, tenant, panima["id"], "User's door code is 4711.", time_end=FROZEN_NOW)
    await add_memory(pack_runtime, tenant, panima["id"], "User likes jazz.", time_end=FROZEN_NOW)
    pack = (await latest(pclient, tenant, panima["id"], query="door code")).json()
    assert "4711" in pack["context"]

    r = await pclient.patch(
        f"/api/memories/{wrong}",
        headers=tenant.headers,
        json={"summary": "User's door code changed; ask them.", "importance": 0.9},
    )
    assert r.status_code == 200 and r.json()["summary"].startswith("User's door code changed")

    assert (await pclient.get(f"/api/memory-packs/{pack['id']}", headers=tenant.headers)).status_code == 404
    history = (await pclient.get(f"/api/animas/{panima['id']}/memory-packs", headers=tenant.headers)).json()["items"]
    assert all("4711" not in p["context"] for p in history)
    assert all(b"4711" not in e.body for e in pack_runtime.pack_state.lru._entries.values())
    assert set(await traces(pack_runtime, panima["id"], "4711")) <= {"dream_actions"}, "the journal is the audit"
    fresh = (await latest(pclient, tenant, panima["id"], query="door code")).json()
    assert "4711" not in fresh["context"] and "ask them" in fresh["context"]
    assert "jazz" in (await latest(pclient, tenant, panima["id"])).json()["context"], "other memories unaffected"
