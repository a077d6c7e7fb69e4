"""Strict types on the wire and complete answers to small questions (issue 28, items 9 and 11):
no coercion between booleans, numbers and strings; instants only as ISO 8601 strings; a null for a
field that cannot be null is a 422; pack weights finite and in their documented range; OPTIONS
names every method of a path."""

from __future__ import annotations

import uuid

import httpx
import pytest

from tests.conftest import Tenant
from tests.hardening.helpers import JSON, error


@pytest.fixture
async def memory(client: httpx.AsyncClient, runtime, tenant: Tenant, anima: dict) -> dict:  # type: ignore[no-untyped-def]
    """A memory of ``anima``, made by a dream over two turns."""
    from elephantasm.services.dreams import run_dream

    turns = [
        {"anima_id": anima["id"], "event_type": "message.in", "role": "user", "content": "I live in Porto."},
        {"anima_id": anima["id"], "event_type": "message.out", "role": "assistant", "content": "Porto is lovely."},
    ]
    r = await client.post("/api/events/batch", json={"events": turns}, headers=tenant.headers)
    assert r.status_code == 201, r.text
    await run_dream(runtime.dreams, tenant.org_id, uuid.UUID(anima["id"]))
    items = (await client.get("/api/memories", params={"anima_id": anima["id"]}, headers=tenant.headers)).json()
    assert items["items"], "the dream made no memory"
    return items["items"][0]


@pytest.mark.parametrize(
    ("field", "value"),
    [("confidence", False), ("importance", True), ("confidence", "0.5"), ("importance", "1")],
)
async def test_a_memory_patch_takes_numbers_only_as_numbers(
    client: httpx.AsyncClient, tenant: Tenant, memory: dict, field: str, value: object
) -> None:
    r = await client.patch(f"/api/memories/{memory['id']}", json={field: value}, headers=tenant.headers)
    assert field in error(r, 422)
    again = (await client.get(f"/api/memories/{memory['id']}", headers=tenant.headers)).json()
    assert again[field] == memory[field]


@pytest.mark.parametrize("field", ["summary", "importance", "confidence", "state"])
async def test_a_null_for_a_memory_field_that_cannot_be_null_is_422(
    client: httpx.AsyncClient, tenant: Tenant, memory: dict, field: str
) -> None:
    r = await client.patch(f"/api/memories/{memory['id']}", json={field: None}, headers=tenant.headers)
    assert field in error(r, 422)
    # Nullable fields may still be cleared, and omitted fields keep their values.
    r = await client.patch(f"/api/memories/{memory['id']}", json={"meta": None}, headers=tenant.headers)
    assert r.status_code == 200, r.text
    assert r.json()["summary"] == memory["summary"]


async def test_event_numbers_booleans_and_instants_are_strict(
    client: httpx.AsyncClient, tenant: Tenant, anima: dict
) -> None:
    base = {"anima_id": anima["id"], "event_type": "system", "content": "x"}
    for field, value in [
        ("importance_score", True),
        ("importance_score", "0.5"),
        ("occurred_at", 0.5),
        ("occurred_at", 1_700_000_000),
        ("occurred_at", "1700000000"),
    ]:
        r = await client.post("/api/events", json=base | {field: value}, headers=tenant.headers)
        assert field in error(r, 422), (field, value)
        batch = await client.post("/api/events/batch", json={"events": [base | {field: value}]}, headers=tenant.headers)
        assert field in error(batch, 422), (field, value)
    listed = await client.get("/api/events", params={"anima_id": anima["id"]}, headers=tenant.headers)
    assert listed.json()["items"] == []
    ok = await client.post("/api/events", json=base | {"importance_score": 1}, headers=tenant.headers)
    assert ok.status_code == 201 and ok.json()["importance_score"] == 1.0


@pytest.mark.parametrize("value", ["0.5", "1700000000", "2026-01-01", "yesterday", "2026-01-01T00:00:00"])
async def test_query_instants_are_iso_date_times_with_an_offset(
    client: httpx.AsyncClient, tenant: Tenant, anima: dict, value: str
) -> None:
    for name in ("since", "until"):
        r = await client.get("/api/events", params={"anima_id": anima["id"], name: value}, headers=tenant.headers)
        assert name in error(r, 422), (name, value)
    r = await client.get(
        "/api/events", params={"anima_id": anima["id"], "until": "2026-01-01T00:00:00+02:00"}, headers=tenant.headers
    )
    assert r.status_code == 200, r.text


@pytest.mark.parametrize("raw", [b"1e-320", b"5e-324", b"1e-7", b"-1", b"1e400", b"1001", b"1e308", b"true"])
async def test_pack_weights_outside_their_range_are_422(
    client: httpx.AsyncClient, tenant: Tenant, anima: dict, raw: bytes
) -> None:
    turn = {"anima_id": anima["id"], "event_type": "message.in", "role": "user", "content": "I like green tea."}
    assert (await client.post("/api/events", json=turn, headers=tenant.headers)).status_code == 201  # a scored item
    for group, name in (("weights", "importance"), ("shares", "knowledge")):
        body = (
            (b'{"anima_id": "' + anima["id"].encode() + b'", "' + group.encode() + b'": {"' + name.encode() + b'": ')
            + raw
            + b"}}"
        )
        r = await client.post("/api/packs/compile", content=body, headers=tenant.headers | JSON)
        detail = error(r, 422)
        assert name in detail or (raw == b"1e400" and "out of range" in detail), (group, raw, detail)


async def test_pack_weights_inside_their_range_compile(client: httpx.AsyncClient, tenant: Tenant, anima: dict) -> None:
    for value in (0, 0.001, 1, 1000):
        r = await client.post(
            "/api/packs/compile",
            json={"anima_id": anima["id"], "weights": {"importance": value}, "shares": {"knowledge": value}},
            headers=tenant.headers,
        )
        assert r.status_code == 200, (value, r.text)


async def test_options_names_every_method_of_every_path(client: httpx.AsyncClient, tenant: Tenant) -> None:
    document = (await client.get("/schema/openapi.json")).json()
    some_id = str(uuid.uuid4())
    incomplete = {}
    for path, item in document["paths"].items():
        documented = {m.upper() for m in item if m in {"get", "post", "put", "patch", "delete"}}
        concrete = path
        while "{" in concrete:
            start = concrete.index("{")
            concrete = concrete[:start] + some_id + concrete[concrete.index("}", start) + 1 :]
        r = await client.options(concrete, headers=tenant.headers)
        allowed = {m.strip() for m in r.headers.get("allow", "").split(",") if m.strip()}
        if r.status_code not in (200, 204) or not documented | {"OPTIONS"} <= allowed:
            incomplete[path] = (r.status_code, sorted(documented), sorted(allowed))
    assert not incomplete, incomplete


async def test_weights_that_leave_nothing_to_score_name_the_field_plainly(
    client: httpx.AsyncClient, tenant: Tenant, anima: dict
) -> None:
    zero = dict.fromkeys(("importance", "confidence", "recency", "decay", "relevance"), 0)
    r = await client.post("/api/packs/compile", json={"anima_id": anima["id"], "weights": zero}, headers=tenant.headers)
    detail = error(r, 422)
    assert detail.startswith('"weights: at least one') and "validation error for" not in detail, detail
