"""NUL bytes, undecodable bodies, odd JSON keys and out-of-range integers are 4xx with ``detail``
(issue 11.3), and nothing is written."""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import Tenant
from tests.hardening.helpers import JSON, error

NUL = "a\u0000b"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"content": NUL}, "content"),
        ({"role": NUL}, "role"),
        ({"session_id": NUL}, "session_id"),
        ({"dedupe_key": NUL}, "dedupe_key"),
        ({"meta": {"k": NUL}}, "meta"),
        ({"meta": {NUL: 1}}, "meta"),
        ({"meta": {"list": [1, {"deep": NUL}]}}, "meta"),
    ],
)
async def test_nul_in_any_event_string_is_422(
    client: httpx.AsyncClient, tenant: Tenant, anima: dict, change: dict, field: str
) -> None:
    body = {"anima_id": anima["id"], "event_type": "message.in", "content": "hi"} | change
    r = await client.post("/api/events", json=body, headers=tenant.headers)
    detail = error(r, 422)
    assert field in detail and "NUL" in detail
    r = await client.post("/api/events/batch", json={"events": [body]}, headers=tenant.headers)
    assert field in error(r, 422)
    listed = await client.get("/api/events", params={"anima_id": anima["id"]}, headers=tenant.headers)
    assert listed.json()["items"] == []


async def test_nul_in_other_bodies_is_422(client: httpx.AsyncClient, tenant: Tenant, anima: dict) -> None:
    h = tenant.headers
    cases = [
        ("post", "/api/animas", {"name": NUL}),
        ("patch", f"/api/animas/{anima['id']}", {"description": NUL}),
        ("post", "/api/keys", {"name": NUL}),
        ("post", "/api/packs/compile", {"anima_id": anima["id"], "query": NUL}),
        ("post", "/api/memories/search/semantic", {"anima_id": anima["id"], "query": NUL}),
        ("post", "/api/knowledge/search/semantic", {"anima_id": anima["id"], "query": NUL}),
    ]
    for method, path, body in cases:
        r = await client.request(method, path, json=body, headers=h)
        assert "NUL" in error(r, 422), path


@pytest.mark.parametrize(
    ("path", "param"),
    [
        ("/api/events", "session_id"),
        ("/api/knowledge", "topic"),
        ("/api/animas/{anima}/memory-packs/latest", "query"),
        ("/api/animas/{anima}/memory-packs/latest", "session_id"),
        ("/api/animas/{anima}/memory-packs/latest", "preset"),
        ("/api/animas", "cursor"),
    ],
)
async def test_nul_in_a_query_parameter_is_422(
    client: httpx.AsyncClient, tenant: Tenant, anima: dict, path: str, param: str
) -> None:
    r = await client.get(path.format(anima=anima["id"]), params={param: NUL}, headers=tenant.headers)
    assert param in error(r, 422)


async def test_undecodable_body_is_a_client_error_with_detail(client: httpx.AsyncClient, tenant: Tenant) -> None:
    for body in (b'{"name": "\xff"}', b"\xff", b'{"name": "ok", "meta": {"\xc3": 1}}'):
        r = await client.post("/api/animas", content=body, headers=tenant.headers | JSON)
        assert r.status_code in (400, 422)
        assert "UTF-8" in error(r, r.status_code) or "malformed" in error(r, r.status_code)


async def test_non_ascii_digit_key_does_not_crash_the_error_handler(
    client: httpx.AsyncClient, tenant: Tenant, anima: dict
) -> None:
    for body in ({"\u00b2": 1}, {"events": {"\u00b2": 1}}, {"\u0663": "x"}):
        r = await client.post("/api/events", json=body, headers=tenant.headers)
        error(r, 422)
        r = await client.post("/api/events/batch", json=body, headers=tenant.headers)
        error(r, 422)


async def test_null_for_a_required_anima_field_is_422(client: httpx.AsyncClient, tenant: Tenant, anima: dict) -> None:
    r = await client.patch(f"/api/animas/{anima['id']}", json={"name": None}, headers=tenant.headers)
    assert "name" in error(r, 422)
    again = await client.get(f"/api/animas/{anima['id']}", headers=tenant.headers)
    assert again.json()["name"] == anima["name"]


@pytest.mark.parametrize("version", [2147483648, 10**30, 0])
async def test_identity_restore_version_out_of_range_is_422(
    client: httpx.AsyncClient, tenant: Tenant, anima: dict, version: int
) -> None:
    r = await client.post(
        f"/api/identities/anima/{anima['id']}/restore", json={"version": version}, headers=tenant.headers
    )
    assert "version" in error(r, 422)


async def test_query_string_that_is_not_utf8_is_422(client: httpx.AsyncClient, tenant: Tenant) -> None:
    r = await client.get("/api/events?session_id=%FF%FE", headers=tenant.headers)
    assert "UTF-8" in error(r, 422)
