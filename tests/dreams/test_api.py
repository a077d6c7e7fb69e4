"""The dreamer's HTTP routes: trigger (202/409), the journal, memories, knowledge and identity."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest

from elephantasm.domain.dreaming import OfflineEngine
from elephantasm.runtime import Runtime
from elephantasm.services.dreams import run_dream
from tests.conftest import Tenant
from tests.dreams.helpers import add_events, new_anima, turns, variant, wait_finished, wait_for_dreams

CHAT = [
    "Hello! I live in Lisbon and my favorite color is green.",
    "Hi there. Lisbon is sunny; green suits it.",
    "I prefer tea over coffee, by the way.",
    "Noted, tea it is. Anything else I should remember?",
]


class GatedEngine(OfflineEngine):
    """The offline engine, held at a gate until the test opens it."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()
        self.entered = asyncio.Event()

    async def distil(self, events, existing_identity):  # type: ignore[no-untyped-def]
        self.entered.set()
        await self.gate.wait()
        return await super().distil(events, existing_identity)


@pytest.fixture
async def gated(runtime: Runtime) -> AsyncIterator[tuple[httpx.AsyncClient, GatedEngine, Runtime]]:
    """A client over an app whose runtime dreams with a gated engine."""
    from api.app import create_app

    engine = GatedEngine()
    rt = variant(runtime, engine=engine)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(rt)), base_url="http://t") as c:
        yield c, engine, rt
    engine.gate.set()
    await wait_for_dreams(rt.dream_tasks)


async def test_trigger_is_202_then_409_while_running(gated, tenant: Tenant) -> None:  # type: ignore[no-untyped-def]
    client, engine, rt = gated
    anima_id = await new_anima(rt, tenant.org_id)
    await add_events(rt, tenant.org_id, anima_id, turns(CHAT))
    first = await client.post("/api/dreams/trigger", json={"anima_id": str(anima_id)}, headers=tenant.headers)
    assert first.status_code == 202, first.text
    run = first.json()
    assert run["status"] == "running" and run["anima_id"] == str(anima_id) and run["trigger"] == "manual"
    await asyncio.wait_for(engine.entered.wait(), 5)
    second = await client.post("/api/dreams/trigger", json={"anima_id": str(anima_id)}, headers=tenant.headers)
    assert second.status_code == 409 and run["id"] in second.json()["detail"]
    listed = await client.get(
        "/api/dreams/sessions", params={"anima_id": str(anima_id), "status": "running"}, headers=tenant.headers
    )
    assert [r["id"] for r in listed.json()["items"]] == [run["id"]]

    engine.gate.set()
    done = await wait_finished(client, tenant.headers, run["id"])
    assert done["status"] == "completed" and done["events_read"] == 4 and done["error"] is None
    assert done["memories_created"] >= 1 and done["duration_seconds"] >= 0
    assert done["action_count"] == len(done["actions"]) > 0
    assert {a["action"] for a in done["actions"]} >= {"created"}
    assert all("embedding" not in a.get("after", {}) for a in done["actions"] if a["after"])
    # Each new memory's journal entry names it (the run is the entry's) and copies none of its text.
    created = {
        a["target_id"]: a["after"] for a in done["actions"] if (a["action"], a["target_type"]) == ("created", "memory")
    }
    assert len(created) == done["memories_created"]
    for memory_id, after in created.items():
        memory = (await client.get(f"/api/memories/{memory_id}", headers=tenant.headers)).json()
        assert after == {"events": len(memory["event_ids"]), "importance": memory["importance"]}
        assert "run_id" not in memory["meta"]
    third = await client.post("/api/dreams/trigger", json={"anima_id": str(anima_id)}, headers=tenant.headers)
    assert third.status_code == 202  # the lease is free again
    await wait_finished(client, tenant.headers, third.json()["id"])


async def test_trigger_validation(client: httpx.AsyncClient, tenant: Tenant) -> None:
    r = await client.post("/api/dreams/trigger", json={"anima_id": "nope"}, headers=tenant.headers)
    assert r.status_code == 422
    r = await client.post("/api/dreams/trigger", json={}, headers=tenant.headers)
    assert r.status_code == 422
    r = await client.get("/api/dreams/sessions", params={"status": "sleeping"}, headers=tenant.headers)
    assert r.status_code == 422 and "status" in r.json()["detail"]
    r = await client.get("/api/dreams/sessions/not-a-uuid", headers=tenant.headers)
    assert r.status_code == 422


@pytest.fixture
async def dreamt(runtime: Runtime, tenant: Tenant) -> dict:
    """An anima with one completed offline run."""
    anima_id = await new_anima(runtime, tenant.org_id)
    later = ["Quick reminder: my favorite color is green.", "Understood, green it stays."]
    events = await add_events(runtime, tenant.org_id, anima_id, turns(CHAT) + turns(later, session="s2"))
    run = await run_dream(runtime.dreams, tenant.org_id, anima_id)
    assert run.status == "completed", run.error
    return {"anima": str(anima_id), "events": [str(e.id) for e in events], "run": str(run.id)}


async def test_memories_routes(client: httpx.AsyncClient, tenant: Tenant, dreamt: dict) -> None:
    h = tenant.headers
    page = (await client.get("/api/memories", params={"anima_id": dreamt["anima"], "limit": 1}, headers=h)).json()
    assert len(page["items"]) == 1 and page["next_cursor"]
    everything = (await client.get("/api/memories", params={"anima_id": dreamt["anima"]}, headers=h)).json()["items"]
    second = await client.get(
        "/api/memories", params={"anima_id": dreamt["anima"], "cursor": page["next_cursor"]}, headers=h
    )
    assert [m["id"] for m in page["items"] + second.json()["items"]] == [m["id"] for m in everything]
    assert sorted(e for m in everything for e in m["event_ids"]) == sorted(dreamt["events"])
    assert all("embedding" not in m and "fts" not in m for m in everything)

    memory = everything[0]
    events = (await client.get(f"/api/memories/{memory['id']}/events", headers=h)).json()
    assert [e["id"] for e in events] == memory["event_ids"]
    assert events[0]["occurred_at"] <= events[-1]["occurred_at"]
    assert all(e["distilled_at"] for e in events)

    version = (await client.get(f"/api/animas/{dreamt['anima']}", headers=h)).json()["state_version"]
    patched = await client.patch(
        f"/api/memories/{memory['id']}",
        headers=h,
        json={"summary": "User lives in Lisbon.", "importance": 0.9, "state": "decaying"},
    )
    assert patched.status_code == 200, patched.text
    body = patched.json()
    assert (body["summary"], body["importance"], body["state"]) == ("User lives in Lisbon.", 0.9, "decaying")
    assert body["meta"]["state_since"]
    assert (await client.get(f"/api/animas/{dreamt['anima']}", headers=h)).json()["state_version"] == version + 1
    bad = await client.patch(f"/api/memories/{memory['id']}", headers=h, json={"importance": 2})
    assert bad.status_code == 422
    bad = await client.patch(f"/api/memories/{memory['id']}", headers=h, json={"state": "forgotten"})
    assert bad.status_code == 422

    found = await client.post(
        "/api/memories/search/semantic",
        headers=h,
        json={"anima_id": dreamt["anima"], "query": "Lisbon home", "include_archived": True},
    )
    assert found.status_code == 200, found.text
    hits = found.json()
    assert hits[0]["id"] == memory["id"] and hits[0]["similarity"] > 0.3
    assert [x["similarity"] for x in hits] == sorted((x["similarity"] for x in hits), reverse=True)

    decaying = (
        await client.get("/api/memories", params={"anima_id": dreamt["anima"], "state": "decaying"}, headers=h)
    ).json()["items"]
    assert [m["id"] for m in decaying] == [memory["id"]]
    assert (await client.delete(f"/api/memories/{memory['id']}", headers=h)).status_code == 204
    assert (await client.get(f"/api/memories/{memory['id']}", headers=h)).status_code == 404
    assert (await client.get(f"/api/animas/{dreamt['anima']}", headers=h)).json()["state_version"] == version + 2
    left = (await client.get("/api/memories", params={"anima_id": dreamt["anima"]}, headers=h)).json()["items"]
    assert memory["id"] not in {m["id"] for m in left}


async def test_knowledge_routes(client: httpx.AsyncClient, tenant: Tenant, dreamt: dict) -> None:
    h = tenant.headers
    items = (await client.get("/api/knowledge", params={"anima_id": dreamt["anima"]}, headers=h)).json()["items"]
    assert items and all(k["valid_to"] is None for k in items)
    assert all(k["memory_ids"] and set(k["event_ids"]) <= set(dreamt["events"]) for k in items)
    green = next(k for k in items if "green" in k["content"].lower())
    assert green["type"] == "FACT" and len(green["memory_ids"]) == 2  # said in both sessions: one item
    facts = (
        await client.get("/api/knowledge", params={"anima_id": dreamt["anima"], "type": "FACT"}, headers=h)
    ).json()["items"]
    assert {k["type"] for k in facts} == {"FACT"}
    by_topic = (
        await client.get("/api/knowledge", params={"anima_id": dreamt["anima"], "topic": green["topic"]}, headers=h)
    ).json()["items"]
    assert green["id"] in {k["id"] for k in by_topic}
    assert (await client.get("/api/knowledge", params={"type": "OPINION"}, headers=h)).status_code == 422
    one = (await client.get(f"/api/knowledge/{green['id']}", headers=h)).json()
    assert one == green
    history = (await client.get(f"/api/knowledge/{green['id']}/history", headers=h)).json()
    assert [k["id"] for k in history] == [green["id"]]
    found = (
        await client.post(
            "/api/knowledge/search/semantic",
            headers=h,
            json={"anima_id": dreamt["anima"], "query": "favorite color green"},
        )
    ).json()
    assert found[0]["id"] == green["id"] and "embedding" not in found[0]


async def test_identity_routes(client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, dreamt: dict) -> None:
    h, anima = tenant.headers, dreamt["anima"]
    current = (await client.get(f"/api/identities/anima/{anima}", headers=h)).json()
    # A few replies describe no personality yet (identity only with evidence); their counts are kept.
    assert (
        current["version"] == 1 and current["personality_type"] is None and current["self"]["style_stats"]["messages"]
    )
    history = (await client.get(f"/api/identities/anima/{anima}/history", headers=h)).json()
    assert [v["version"] for v in history] == [1] and history[0]["reason"] and history[0]["run_id"] == dreamt["run"]

    long_answers = [
        "Hey!",
        "Absolutely, here is a detailed plan. First we outline the goals, then we list every "
        "constraint, and finally we compare three options with their costs, risks and benefits in turn. "
        "Furthermore, I will structure it as a numbered list so that each step is clear and easy to follow later.",
    ] * 6
    await add_events(runtime, tenant.org_id, __import__("uuid").UUID(anima), turns(long_answers, session="s9"))
    await run_dream(runtime.dreams, tenant.org_id, __import__("uuid").UUID(anima))
    history = (await client.get(f"/api/identities/anima/{anima}/history", headers=h)).json()
    assert [v["version"] for v in history] == [2, 1] and history[0]["reason"] != history[1]["reason"]

    version = (await client.get(f"/api/animas/{anima}", headers=h)).json()["state_version"]
    restored = await client.post(f"/api/identities/anima/{anima}/restore", json={"version": 1}, headers=h)
    assert restored.status_code == 200, restored.text
    body = restored.json()
    assert body["version"] == 3 and body["personality_type"] == history[1]["personality_type"]
    assert body["self"] == history[1]["self"]
    history = (await client.get(f"/api/identities/anima/{anima}/history", headers=h)).json()
    assert history[0]["reason"] == "restored version 1" and history[0]["run_id"] is None
    assert (await client.get(f"/api/animas/{anima}", headers=h)).json()["state_version"] == version + 1
    missing = await client.post(f"/api/identities/anima/{anima}/restore", json={"version": 99}, headers=h)
    assert missing.status_code == 404
    assert (
        await client.post(f"/api/identities/anima/{anima}/restore", json={"version": 0}, headers=h)
    ).status_code == 422


async def test_identity_of_new_anima_is_404(client: httpx.AsyncClient, tenant: Tenant, anima: dict) -> None:
    r = await client.get(f"/api/identities/anima/{anima['id']}", headers=tenant.headers)
    assert r.status_code == 404 and "no identity" in r.json()["detail"]
    r = await client.get(f"/api/identities/anima/{anima['id']}/history", headers=tenant.headers)
    assert r.status_code == 200 and r.json() == []
