"""The per-anima event sequence: every insert path numbers events under the anima's
row lock, a dedupe hit moves nothing, and ``distilled_at`` on the wire is derived from the chunks."""

from __future__ import annotations

import asyncio
import json
import uuid

import httpx
from sqlalchemy import select

from elephantasm.db.models import Anima, Event
from elephantasm.db.scopes import of_anima
from elephantasm.runtime import Runtime
from elephantasm.services.anima_export import export_lines
from elephantasm.services.dreams import run_dream
from tests.conftest import Tenant
from tests.lifecycle.helpers import import_anima


def _event(anima_id: str, content: str, **extra) -> dict:  # type: ignore[no-untyped-def]
    return {"anima_id": anima_id, "event_type": "message.in", "content": content, **extra}


async def _state(runtime: Runtime, anima_id: str) -> tuple[int, int, int]:
    """(state_version, event_seq, distilled_seq) of the anima."""
    async with runtime.read_session() as session:
        row = (
            await session.execute(
                select(Anima.state_version, Anima.event_seq, Anima.distilled_seq).where(Anima.id == uuid.UUID(anima_id))
            )
        ).one()
    return row.state_version, row.event_seq, row.distilled_seq


def _events(lines: list[str]) -> list[dict]:
    """An export's event records, without their ids."""
    records = (json.loads(line) for line in lines)
    return [{k: v for k, v in r.items() if k != "id"} for r in records if r["kind"] == "event"]


async def _seqs(runtime: Runtime, anima_id: str) -> list[int]:
    async with runtime.read_session() as session:
        stmt = select(Event.seq).where(*of_anima(Event, uuid.UUID(anima_id))).order_by(Event.seq)
        return list((await session.execute(stmt)).scalars())


async def test_concurrent_single_and_batch_inserts_number_every_event_once(
    client: httpx.AsyncClient, tenant: Tenant, anima: dict, runtime: Runtime
) -> None:
    singles = [
        client.post("/api/events", json=_event(anima["id"], f"single {i}"), headers=tenant.headers) for i in range(12)
    ]
    batches = [
        client.post(
            "/api/events/batch",
            headers=tenant.headers,
            json={"events": [_event(anima["id"], f"batch {b}.{i}") for i in range(5)]},
        )
        for b in range(4)
    ]
    replies = await asyncio.gather(*singles, *batches)
    assert all(r.status_code == 201 for r in replies), [r.text for r in replies]
    # No duplicates: the seqs are exactly 1..n, none lost to a race and none handed out twice.
    assert await _seqs(runtime, anima["id"]) == list(range(1, 33))
    assert (await _state(runtime, anima["id"]))[1:] == (32, 0)


async def test_a_dedupe_hit_moves_nothing(
    client: httpx.AsyncClient, tenant: Tenant, anima: dict, runtime: Runtime
) -> None:
    first = await client.post("/api/events", json=_event(anima["id"], "hello", dedupe_key="k1"), headers=tenant.headers)
    assert first.status_code == 201 and first.json()["distilled_at"] is None
    before = await _state(runtime, anima["id"])
    again = await client.post("/api/events", json=_event(anima["id"], "hello", dedupe_key="k1"), headers=tenant.headers)
    batch = await client.post(
        "/api/events/batch", headers=tenant.headers, json={"events": [_event(anima["id"], "hello", dedupe_key="k1")]}
    )
    assert again.status_code == 200 and again.json() == first.json()
    assert batch.status_code == 200 and batch.json()["items"] == [first.json()]  # a pure replay, like the single one
    assert await _state(runtime, anima["id"]) == before  # no state_version, no seq, no watermark move
    assert await _seqs(runtime, anima["id"]) == [1]


async def test_racing_duplicates_store_one_event(
    client: httpx.AsyncClient, tenant: Tenant, anima: dict, runtime: Runtime
) -> None:
    before = await _state(runtime, anima["id"])
    replies = await asyncio.gather(
        *(
            client.post("/api/events", json=_event(anima["id"], "same", dedupe_key="race"), headers=tenant.headers)
            for _ in range(8)
        )
    )
    assert sorted(r.status_code for r in replies) == [200] * 7 + [201]
    assert len({r.json()["id"] for r in replies}) == 1
    (seq,) = await _seqs(runtime, anima["id"])
    version, event_seq, distilled = await _state(runtime, anima["id"])
    # Requests in flight together may each pass the dedupe check before the first commits: then an
    # unused seq and an extra state_version (a cache miss), never a second event.
    assert version > before[0] and seq <= event_seq <= 8 and distilled == 0


async def test_distilled_at_on_the_wire_and_through_export_import(
    client: httpx.AsyncClient, tenant: Tenant, anima: dict, runtime: Runtime
) -> None:
    aid = uuid.UUID(anima["id"])
    early = [_event(anima["id"], f"I grow {w} on the balcony.", session_id="s1") for w in ("basil", "mint", "sage")]
    await client.post("/api/events/batch", json={"events": early}, headers=tenant.headers)
    run = await run_dream(runtime.dreams, tenant.org_id, aid)
    assert run.status == "completed" and run.events_read == 3
    late = await client.post(
        "/api/events",
        json=_event(anima["id"], "Also chives.", session_id="s1", occurred_at="2020-01-01T00:00:00Z"),
        headers=tenant.headers,
    )
    listed = (await client.get(f"/api/events?anima_id={aid}", headers=tenant.headers)).json()["items"]
    stamps = {e["content"]: e["distilled_at"] for e in listed}
    assert stamps.pop("Also chives.") is None  # back-dated and recorded after the run: pending
    assert len(set(stamps.values())) == 1 and None not in stamps.values()
    one = (await client.get(f"/api/events/{late.json()['id']}", headers=tenant.headers)).json()
    assert one["distilled_at"] is None

    async with runtime.read_session() as session:
        lines = [line async for line in export_lines(session, tenant.org_id, aid)]
    copy = await import_anima(runtime, tenant.org_id, lines, name="copy")
    assert await _state(runtime, str(copy)) == (1, 4, 3)  # distilled first, the pending one above the watermark
    async with runtime.read_session() as session:
        again = [line async for line in export_lines(session, tenant.org_id, copy)]
    assert _events(again) == _events(lines)  # the same distilled_at, event for event
    second = await run_dream(runtime.dreams, tenant.org_id, copy)
    assert second.events_read == 1  # only the pending one: the distilled ones are not distilled again
