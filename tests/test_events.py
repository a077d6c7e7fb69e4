"""Extract (single and batch), idempotency and reading events, on real Postgres."""

from __future__ import annotations

import asyncio

import httpx
from sqlalchemy import func, select

from elephantasm.db.models import Event
from elephantasm.db.scopes import of_anima
from tests.conftest import Tenant


def _event(anima_id: str, content: str, **extra) -> dict:  # type: ignore[no-untyped-def]
    return {"anima_id": anima_id, "event_type": "message.in", "content": content, **extra}


async def _state_version(client: httpx.AsyncClient, tenant: Tenant, anima_id: str) -> int:
    return (await client.get(f"/api/animas/{anima_id}", headers=tenant.headers)).json()["state_version"]


async def test_single_extract_stores_every_field(client: httpx.AsyncClient, tenant: Tenant, anima: dict) -> None:
    body = _event(
        anima["id"],
        "I prefer tea",
        role="user",
        author="sam",
        summary="tea",
        session_id="s1",
        meta={"channel": "chat"},
        source_uri="chat://1",
        importance_score=0.8,
        occurred_at="2026-01-02T03:04:05Z",
    )
    r = await client.post("/api/events", json=body, headers=tenant.headers)
    assert r.status_code == 201, r.text
    stored = r.json()
    for field in ("role", "author", "summary", "session_id", "meta", "source_uri", "importance_score", "content"):
        assert stored[field] == body[field]
    assert stored["occurred_at"].startswith("2026-01-02T03:04:05")
    fetched = (await client.get(f"/api/events/{stored['id']}", headers=tenant.headers)).json()
    assert fetched == stored


async def test_extract_bumps_state_version(client: httpx.AsyncClient, tenant: Tenant, anima: dict) -> None:
    before = await _state_version(client, tenant, anima["id"])
    await client.post("/api/events", json=_event(anima["id"], "hello"), headers=tenant.headers)
    assert await _state_version(client, tenant, anima["id"]) == before + 1


async def test_dedupe_key_returns_stored_event_with_200(client: httpx.AsyncClient, tenant: Tenant, anima: dict) -> None:
    body = _event(anima["id"], "once", dedupe_key="k-1")
    first = await client.post("/api/events", json=body, headers=tenant.headers)
    version = await _state_version(client, tenant, anima["id"])
    second = await client.post("/api/events", json=body | {"content": "changed"}, headers=tenant.headers)
    assert (first.status_code, second.status_code) == (201, 200)
    assert second.json()["id"] == first.json()["id"] and second.json()["content"] == "once"
    assert await _state_version(client, tenant, anima["id"]) == version  # a duplicate changes nothing


async def test_twenty_concurrent_identical_extracts_leave_one_row(
    client: httpx.AsyncClient,
    runtime,
    tenant: Tenant,
    anima: dict,  # type: ignore[no-untyped-def]
) -> None:
    body = _event(anima["id"], "racing", dedupe_key="race-1")
    responses = await asyncio.gather(
        *(client.post("/api/events", json=body, headers=tenant.headers) for _ in range(20))
    )
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [200] * 19 + [201]
    assert len({r.json()["id"] for r in responses}) == 1
    async with runtime.read_session() as session:
        count = (
            await session.execute(
                select(func.count())
                .select_from(Event)
                .where(*of_anima(Event, anima["id"]), Event.dedupe_key == "race-1")
            )
        ).scalar_one()
    assert count == 1


async def test_batch_returns_events_in_request_order(client: httpx.AsyncClient, tenant: Tenant, anima: dict) -> None:
    await client.post("/api/events", json=_event(anima["id"], "old", dedupe_key="dup"), headers=tenant.headers)
    events = [_event(anima["id"], f"turn {i}", session_id="b") for i in range(5)]
    events.insert(2, _event(anima["id"], "again", dedupe_key="dup"))
    r = await client.post("/api/events/batch", json={"events": events}, headers=tenant.headers)
    assert r.status_code == 201, r.text
    body = r.json()
    assert [e["content"] for e in body["items"]] == ["turn 0", "turn 1", "old", "turn 2", "turn 3", "turn 4"]
    assert (body["created"], body["deduplicated"]) == (5, 1)


async def test_batch_with_one_bad_event_writes_nothing(client: httpx.AsyncClient, tenant: Tenant, anima: dict) -> None:
    events = [_event(anima["id"], f"ok {i}") for i in range(3)] + [_event(anima["id"], "bad", event_type="nope")]
    r = await client.post("/api/events/batch", json={"events": events}, headers=tenant.headers)
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"] == ["body", "events", 3, "event_type"]
    listed = (await client.get("/api/events", params={"anima_id": anima["id"]}, headers=tenant.headers)).json()
    assert listed["items"] == []


async def test_batch_limit_is_413(client: httpx.AsyncClient, tenant: Tenant, anima: dict) -> None:
    events = [_event(anima["id"], f"e{i}") for i in range(1001)]
    r = await client.post("/api/events/batch", json={"events": events}, headers=tenant.headers)
    assert r.status_code == 413 and "1000" in r.json()["detail"]


async def test_list_filters_and_pages(client: httpx.AsyncClient, tenant: Tenant, anima: dict) -> None:
    h = tenant.headers
    events = [
        _event(anima["id"], f"m{i}", session_id="s1" if i % 2 else "s2", occurred_at=f"2026-03-0{i + 1}T00:00:00Z")
        for i in range(6)
    ] + [_event(anima["id"], "tool", event_type="tool.call", session_id="s1", occurred_at="2026-03-09T00:00:00Z")]
    assert (await client.post("/api/events/batch", json={"events": events}, headers=h)).status_code == 201

    async def contents(**params) -> list[str]:  # type: ignore[no-untyped-def]
        out, cursor = [], None
        while True:
            query = {"anima_id": anima["id"], "limit": 2, **params} | ({"cursor": cursor} if cursor else {})
            page = (await client.get("/api/events", params=query, headers=h)).json()
            out += [e["content"] for e in page["items"]]
            if not (cursor := page["next_cursor"]):
                return out

    assert await contents() == ["m0", "m1", "m2", "m3", "m4", "m5", "tool"]
    assert await contents(session_id="s1") == ["m1", "m3", "m5", "tool"]
    assert await contents(event_type="tool.call") == ["tool"]
    assert await contents(since="2026-03-03T00:00:00Z", until="2026-03-05T00:00:00Z") == ["m2", "m3"]
