"""Events as stored: an empty ``meta`` is NULL and ``event_type`` an enum, while
every reader answers exactly what it answered before (``{}`` and the type's label)."""

from __future__ import annotations

import httpx
from sqlalchemy import text

from elephantasm.runtime import Runtime
from tests.conftest import Tenant


async def _stored(runtime: Runtime, ids: list[str]) -> dict[str, tuple[str | None, str]]:
    """Each event's stored ``meta`` (jsonb text or None) and type label, read past every reader."""
    async with runtime.read_session() as session:
        rows = await session.execute(
            text("SELECT id::text, meta::text, event_type::text FROM events WHERE id = ANY(CAST(:ids AS uuid[]))"),
            {"ids": ids},
        )
        return {r[0]: (r[1], r[2]) for r in rows}


async def test_empty_meta_is_stored_as_null_and_read_back_as_an_empty_object(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, anima: dict
) -> None:
    h, aid = tenant.headers, anima["id"]
    single = await client.post("/api/events", json={"anima_id": aid, "event_type": "message.in", "content": "a"},
                               headers=h)  # fmt: skip
    with_meta = await client.post(
        "/api/events",
        json={"anima_id": aid, "event_type": "tool.call", "content": "b", "meta": {"k": [1]}, "dedupe_key": "d"},
        headers=h,
    )
    batch = await client.post("/api/events/batch", headers=h, json={"events": [
        {"anima_id": aid, "event_type": "message.out", "content": "c"},
        {"anima_id": aid, "event_type": "system", "content": "d", "meta": {}},
    ]})  # fmt: skip
    assert (single.status_code, with_meta.status_code, batch.status_code) == (201, 201, 201)
    written = [single.json(), with_meta.json(), *batch.json()["items"]]
    assert [e["meta"] for e in written] == [{}, {"k": [1]}, {}, {}]
    assert [e["event_type"] for e in written] == ["message.in", "tool.call", "message.out", "system"]
    ids = [e["id"] for e in written]
    stored = await _stored(runtime, ids)
    assert [stored[i] for i in ids] == [(None, "message.in"), ('{"k": [1]}', "tool.call"),
                                        (None, "message.out"), (None, "system")]  # fmt: skip

    # Every reader gives what the write answered: one event, the listing, a dedupe hit.
    for event in written:
        assert (await client.get(f"/api/events/{event['id']}", headers=h)).json() == event
    listed = (await client.get("/api/events", params={"anima_id": aid}, headers=h)).json()["items"]
    assert sorted(listed, key=lambda e: e["id"]) == sorted(written, key=lambda e: e["id"])
    again = await client.post("/api/events", json={"anima_id": aid, "event_type": "tool.call", "content": "x",
                                                   "dedupe_key": "d"}, headers=h)  # fmt: skip
    assert again.status_code == 200 and again.json() == written[1]
    again = await client.post("/api/events/batch", headers=h, json={"events": [
        {"anima_id": aid, "event_type": "tool.call", "content": "x", "dedupe_key": "d"}]})  # fmt: skip
    assert again.json()["items"] == [written[1]]


async def test_type_filter_and_unknown_types(client: httpx.AsyncClient, tenant: Tenant, anima: dict) -> None:
    h, aid = tenant.headers, anima["id"]
    events = [{"anima_id": aid, "event_type": t, "content": t} for t in ("message.in", "tool.result", "message.in")]
    assert (await client.post("/api/events/batch", json={"events": events}, headers=h)).status_code == 201
    found = await client.get("/api/events", params={"anima_id": aid, "event_type": "tool.result"}, headers=h)
    assert [e["content"] for e in found.json()["items"]] == ["tool.result"]
    unknown = await client.get("/api/events", params={"anima_id": aid, "event_type": "message.sideways"}, headers=h)
    assert unknown.status_code in (400, 422) and isinstance(unknown.json()["detail"], (str, list))
    bad = {"anima_id": aid, "event_type": "message.sideways", "content": "x"}
    assert (await client.post("/api/events", json=bad, headers=h)).status_code == 422
