"""Deep or huge JSON in any JSON field is refused before any write (issue 11.1), and rows already
stored with such JSON never make a list route fail."""

from __future__ import annotations

import uuid

import httpx
from sqlalchemy import text

from elephantasm.runtime import Runtime
from tests.conftest import Tenant
from tests.hardening.helpers import JSON, body_with, deep_json, error


async def _events(client: httpx.AsyncClient, tenant: Tenant, anima_id: str) -> list[dict]:
    r = await client.get("/api/events", params={"anima_id": anima_id}, headers=tenant.headers)
    assert r.status_code == 200, r.text
    return r.json()["items"]


async def test_deep_event_meta_is_422_and_writes_nothing(
    client: httpx.AsyncClient, tenant: Tenant, anima: dict, settings
) -> None:  # type: ignore[no-untyped-def]
    fields = {"anima_id": anima["id"], "event_type": "system", "content": "x"}
    for depth in (settings.max_json_depth + 1, 300, 900, 5000, 100_000):
        r = await client.post(
            "/api/events", content=body_with(fields, {"meta": deep_json(depth)}), headers=tenant.headers | JSON
        )
        detail = error(r, 422)
        if depth > 1000:  # past what the JSON decoder takes: refused as a malformed body
            assert "nested too deeply" in detail
            continue
        assert "meta" in detail and str(settings.max_json_depth) in detail and "max_json_depth" in detail
    ok = await client.post(
        "/api/events",
        content=body_with(fields, {"meta": deep_json(settings.max_json_depth - 1)}),
        headers=tenant.headers | JSON,
    )
    assert ok.status_code == 201, ok.text
    assert len(await _events(client, tenant, anima["id"])) == 1


async def test_deep_meta_in_a_batch_names_the_event_and_writes_none(
    client: httpx.AsyncClient, tenant: Tenant, anima: dict
) -> None:
    good = body_with({"anima_id": anima["id"], "event_type": "system", "content": "fine"}, {})
    bad = body_with({"anima_id": anima["id"], "event_type": "system", "content": "x"}, {"meta": deep_json(400)})
    r = await client.post(
        "/api/events/batch", content=b'{"events": [' + good + b", " + bad + b"]}", headers=tenant.headers | JSON
    )
    assert "events[1].meta" in error(r, 422)
    assert await _events(client, tenant, anima["id"]) == []


async def test_deep_or_huge_anima_meta_is_422(client: httpx.AsyncClient, tenant: Tenant, settings) -> None:  # type: ignore[no-untyped-def]
    h = tenant.headers | JSON
    r = await client.post("/api/animas", content=body_with({"name": "deep"}, {"meta": deep_json(500)}), headers=h)
    assert "meta" in error(r, 422)
    huge = {"blob": "x" * (settings.max_json_bytes + 10)}
    r = await client.post("/api/animas", json={"name": "huge", "meta": huge}, headers=tenant.headers)
    detail = error(r, 422)
    assert "meta" in detail and "max_json_bytes" in detail
    created = await client.post("/api/animas", json={"name": "fine"}, headers=tenant.headers)
    r = await client.patch(
        f"/api/animas/{created.json()['id']}", content=body_with({}, {"meta": deep_json(500)}), headers=h
    )
    assert "meta" in error(r, 422)
    listed = await client.get("/api/animas", headers=tenant.headers)
    assert listed.status_code == 200 and [a["name"] for a in listed.json()["items"]] == ["fine"]
    assert listed.json()["items"][0]["meta"] == {}


async def test_rows_already_holding_deep_json_do_not_break_lists(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, anima: dict
) -> None:
    """Rows written before the limit existed (or by hand) are served with their meta elided."""
    r = await client.post(
        "/api/events", json={"anima_id": anima["id"], "event_type": "system", "content": "old"}, headers=tenant.headers
    )
    event_id = r.json()["id"]
    async with runtime.unit_of_work() as session:
        await session.execute(
            text("UPDATE events SET meta = CAST(:m AS jsonb) WHERE id = :id"),
            {"m": deep_json(995).decode(), "id": uuid.UUID(event_id)},
        )
        await session.execute(
            text("UPDATE animas SET meta = CAST(:m AS jsonb) WHERE id = :id"),
            {"m": deep_json(900).decode(), "id": uuid.UUID(anima["id"])},
        )
    items = await _events(client, tenant, anima["id"])
    assert [e["id"] for e in items] == [event_id]
    assert "elided" in str(items[0]["meta"])
    one = await client.get(f"/api/events/{event_id}", headers=tenant.headers)
    assert one.status_code == 200 and "elided" in str(one.json()["meta"])
    animas = await client.get("/api/animas", headers=tenant.headers)
    assert animas.status_code == 200 and "elided" in str(animas.json()["items"][0]["meta"])
