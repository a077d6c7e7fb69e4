"""Every kind of bad input gets a clear error with ``detail`` and writes nothing."""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import Tenant


async def _event_count(client: httpx.AsyncClient, tenant: Tenant, anima_id: str) -> int:
    return len((await client.get("/api/events", params={"anima_id": anima_id}, headers=tenant.headers)).json()["items"])


@pytest.mark.parametrize(
    ("headers", "needle"),
    [
        ({}, "missing API key"),
        ({"Authorization": "Basic abc"}, "malformed Authorization"),
        ({"Authorization": "Bearer sk_live_not_a_real_key_at_all"}, "invalid"),
        ({"Authorization": "Bearer something-else"}, "invalid"),
    ],
)
async def test_missing_or_invalid_key_is_401(client: httpx.AsyncClient, headers: dict, needle: str) -> None:
    r = await client.get("/api/animas", headers=headers)
    assert r.status_code == 401 and needle in r.json()["detail"]


async def test_malformed_json_is_422(client: httpx.AsyncClient, tenant: Tenant, anima: dict) -> None:
    r = await client.post(
        "/api/events", content=b'{"anima_id": ', headers=tenant.headers | {"content-type": "application/json"}
    )
    assert r.status_code == 422 and "malformed JSON" in r.json()["detail"]
    assert await _event_count(client, tenant, anima["id"]) == 0


@pytest.mark.parametrize(
    ("change", "field", "needle"),
    [
        ({"event_type": "message.sideways"}, "event_type", "message.in, message.out, tool.call, tool.result, system"),
        ({"importance_score": 1.5}, "importance_score", "less than or equal to 1"),
        ({"importance_score": -0.1}, "importance_score", "greater than or equal to 0"),
        ({"content": ""}, "content", "at least 1 character"),
        ({"content": "   "}, "content", "must not be empty"),
        ({"anima_id": "not-a-uuid"}, "anima_id", "UUID"),
        ({"colour": "blue"}, "colour", "Extra inputs"),
        ({"occurred_at": "2026-01-01T00:00:00"}, "occurred_at", "timezone"),
    ],
)
async def test_invalid_event_fields_are_422_naming_the_field(
    client: httpx.AsyncClient, tenant: Tenant, anima: dict, change: dict, field: str, needle: str
) -> None:
    body = {"anima_id": anima["id"], "event_type": "message.in", "content": "hi"} | change
    r = await client.post("/api/events", json=body, headers=tenant.headers)
    assert r.status_code == 422, r.text
    errors = r.json()["detail"]
    assert any(e["loc"][-1] == field and needle in e["msg"] for e in errors), errors
    assert await _event_count(client, tenant, anima["id"]) == 0


async def test_bad_uuid_in_path_is_422(client: httpx.AsyncClient, tenant: Tenant) -> None:
    for path in ("/api/animas/not-a-uuid", "/api/events/123"):
        r = await client.get(path, headers=tenant.headers)
        assert r.status_code == 422 and "not a valid UUID" in r.json()["detail"]


async def test_unknown_anima_is_404_and_writes_nothing(client: httpx.AsyncClient, tenant: Tenant) -> None:
    body = {"anima_id": "00000000-0000-4000-8000-000000000000", "event_type": "system", "content": "x"}
    r = await client.post("/api/events", json=body, headers=tenant.headers)
    assert r.status_code == 404 and "anima" in r.json()["detail"]


async def test_oversized_event_is_413(client: httpx.AsyncClient, tenant: Tenant, anima: dict, settings) -> None:  # type: ignore[no-untyped-def]
    big = "x" * (settings.max_event_bytes + 1)
    r = await client.post(
        "/api/events",
        json={"anima_id": anima["id"], "event_type": "message.in", "content": big},
        headers=tenant.headers,
    )
    assert r.status_code == 413 and str(settings.max_event_bytes) in r.json()["detail"]
    events = [{"anima_id": anima["id"], "event_type": "message.in", "content": "ok"}] * 2
    events.append({"anima_id": anima["id"], "event_type": "message.in", "content": big})
    r = await client.post("/api/events/batch", json={"events": events}, headers=tenant.headers)
    assert r.status_code == 413 and "events[2]" in r.json()["detail"]
    assert await _event_count(client, tenant, anima["id"]) == 0


async def test_request_body_over_limit_is_413(client: httpx.AsyncClient, tenant: Tenant, settings) -> None:  # type: ignore[no-untyped-def]
    body = b'{"name": "' + b"a" * (settings.max_request_bytes + 10) + b'"}'
    r = await client.post("/api/animas", content=body, headers=tenant.headers | {"content-type": "application/json"})
    assert r.status_code == 413 and "detail" in r.json()


async def test_invalid_query_parameters_are_422(client: httpx.AsyncClient, tenant: Tenant) -> None:
    for params, needle in (
        ({"limit": 0}, "limit"),
        ({"event_type": "bogus"}, "event_type"),
        ({"cursor": "%%%"}, "cursor"),
    ):
        r = await client.get("/api/events", params=params, headers=tenant.headers)
        assert r.status_code == 422 and needle in str(r.json()["detail"]), r.text


async def test_unknown_route_has_detail(client: httpx.AsyncClient, tenant: Tenant) -> None:
    r = await client.get("/api/nothing-here", headers=tenant.headers)
    assert r.status_code == 404 and r.json()["detail"]
