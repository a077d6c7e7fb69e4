"""The batch path by COPY (``elephantasm/services/event_copy.py``): dedupe, order, atomicity, versions."""

from __future__ import annotations

import asyncio
import uuid

import httpx
from sqlalchemy import func, select

from elephantasm.db.models import Event
from elephantasm.db.scopes import of_anima
from elephantasm.schemas.events import EventCreate
from elephantasm.services.events import record_events
from tests.conftest import Tenant


def _event(anima_id: str, content: str, **extra) -> dict:  # type: ignore[no-untyped-def]
    return {"anima_id": anima_id, "event_type": "message.in", "content": content, **extra}


async def _version(client: httpx.AsyncClient, tenant: Tenant, anima_id: str) -> int:
    return (await client.get(f"/api/animas/{anima_id}", headers=tenant.headers)).json()["state_version"]


async def _count(runtime, anima_id: str) -> int:  # type: ignore[no-untyped-def]
    async with runtime.read_session() as session:
        stmt = select(func.count()).select_from(Event).where(*of_anima(Event, uuid.UUID(anima_id)))
        return (await session.execute(stmt)).scalar_one()


async def test_duplicate_keys_inside_one_batch_store_the_first(
    client: httpx.AsyncClient, tenant: Tenant, anima: dict
) -> None:
    events = [
        _event(anima["id"], "first", dedupe_key="k"),
        _event(anima["id"], "plain"),
        _event(anima["id"], "second", dedupe_key="k"),
    ]
    r = await client.post("/api/events/batch", json={"events": events}, headers=tenant.headers)
    assert r.status_code == 201, r.text
    body = r.json()
    assert [e["content"] for e in body["items"]] == ["first", "plain", "first"]
    assert body["items"][0]["id"] == body["items"][2]["id"]
    assert (body["created"], body["deduplicated"]) == (2, 1)


async def test_items_are_what_a_read_returns(client: httpx.AsyncClient, tenant: Tenant, anima: dict) -> None:
    events = [
        _event(
            anima["id"],
            "with everything",
            role="user",
            author="sam",
            summary="s",
            session_id="s1",
            meta={"z": [1, 2.5, None], "a": {"ü": "ä"}},
            source_uri="chat://1",
            importance_score=0.25,
            occurred_at="2026-01-02T03:04:05.123456+02:00",
            dedupe_key="all",
        ),
        _event(anima["id"], "bare"),
    ]
    body = (await client.post("/api/events/batch", json={"events": events}, headers=tenant.headers)).json()
    for item in body["items"]:
        assert item == (await client.get(f"/api/events/{item['id']}", headers=tenant.headers)).json()
    assert body["items"][0]["meta"] == {"z": [1, 2.5, None], "a": {"ü": "ä"}}
    assert body["items"][0]["occurred_at"] == "2026-01-02T01:04:05.123456Z"


async def test_one_bump_per_batch_and_none_for_all_duplicates(
    client: httpx.AsyncClient, tenant: Tenant, anima: dict
) -> None:
    events = [_event(anima["id"], f"e{i}", dedupe_key=f"d{i}") for i in range(5)]
    before = await _version(client, tenant, anima["id"])
    assert (await client.post("/api/events/batch", json={"events": events}, headers=tenant.headers)).status_code == 201
    assert await _version(client, tenant, anima["id"]) == before + 1
    again = await client.post("/api/events/batch", json={"events": events}, headers=tenant.headers)
    assert again.json()["created"] == 0 and again.json()["deduplicated"] == 5
    assert await _version(client, tenant, anima["id"]) == before + 1


async def test_a_missing_anima_anywhere_writes_nothing(
    client: httpx.AsyncClient,
    runtime,
    tenant: Tenant,
    other_tenant: Tenant,
    anima: dict,  # type: ignore[no-untyped-def]
) -> None:
    foreign = (await client.post("/api/animas", json={"name": "theirs"}, headers=other_tenant.headers)).json()
    for stranger in (foreign["id"], str(uuid.uuid4())):
        events = [_event(anima["id"], "mine"), _event(stranger, "not mine")]
        r = await client.post("/api/events/batch", json={"events": events}, headers=tenant.headers)
        assert r.status_code == 404 and stranger in r.json()["detail"]
    assert await _count(runtime, anima["id"]) == 0
    assert await _count(runtime, foreign["id"]) == 0


async def test_two_batches_in_one_transaction(runtime, tenant: Tenant, anima: dict) -> None:  # type: ignore[no-untyped-def]
    anima_id = uuid.UUID(anima["id"])
    async with runtime.unit_of_work() as session:
        first = await record_events(
            session,
            tenant.org_id,
            [EventCreate(anima_id=anima_id, event_type="system", content="a", dedupe_key="x")],
            runtime.clock(),
        )
        second = await record_events(
            session,
            tenant.org_id,
            [
                EventCreate(anima_id=anima_id, event_type="system", content="b", dedupe_key="x"),
                EventCreate(anima_id=anima_id, event_type="system", content="c"),
            ],
            runtime.clock(),
        )
    assert [s.created for s in first + second] == [True, False, True]
    assert second[0].row["id"] == first[0].row["id"] and second[0].row["content"] == "a"
    assert await _count(runtime, anima["id"]) == 2


async def test_concurrent_identical_batches_store_each_key_once(
    client: httpx.AsyncClient,
    runtime,
    tenant: Tenant,
    anima: dict,  # type: ignore[no-untyped-def]
) -> None:
    events = [_event(anima["id"], f"race {i}", dedupe_key=f"race-{i}") for i in range(20)]
    responses = await asyncio.gather(
        *(client.post("/api/events/batch", json={"events": events}, headers=tenant.headers) for _ in range(6))
    )
    assert all(r.status_code == (201 if r.json()["created"] else 200) for r in responses)  # 200: a pure replay
    assert sum(r.json()["created"] for r in responses) == 20
    assert len({tuple(e["id"] for e in r.json()["items"]) for r in responses}) == 1
    assert await _count(runtime, anima["id"]) == 20
