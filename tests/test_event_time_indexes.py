"""The events' time and session indexes hold only large animas' events.

Every reader that orders or filters an anima's events by time or session returns exactly the same
for a small anima (its rows read by seq and sorted) as for the same anima flipped into the indexes;
the insert paths flip an anima in the transaction that takes it over ``EVENT_THRESHOLD`` (the batch
path) or right after (the single path), every later row carries the flag, a rolled-back batch
flips nothing, and concurrent inserts into one anima leave no row of a flipped anima unflagged.
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import text

from elephantasm.db.raw import driver_connection
from elephantasm.db.size_switches import EVENT_THRESHOLD as INDEX_THRESHOLD
from elephantasm.runtime import Runtime
from elephantasm.schemas.events import EventCreate
from elephantasm.services import anima_export, event_insert, events
from elephantasm.services.packs import build_request, compile_pack, reads, session
from tests import test_event_anima_key_plans as plans
from tests.conftest import Tenant
from tests.dreams.helpers import add_events, new_anima
from tests.lifecycle.helpers import import_anima
from tests.support.event_animas import event_flags, flip_events


def _history(base: datetime, last_in_session: bool) -> list[dict[str, Any]]:
    """Two named sessions and session-less runs, with ties on ``occurred_at`` and mixed types; the
    latest event is in session "b" or session-less."""
    specs: list[dict[str, Any]] = []

    def add(minute: float, session_id: str | None, i: int) -> None:
        kind = ("message.in", "message.out", "tool.call")[i % 3]
        at = base + timedelta(minutes=minute)
        specs.append({"event_type": kind, "content": f"turn {len(specs)} about Lisbon tea", "occurred_at": at,
                      "session_id": session_id})  # fmt: skip

    for i in range(12):
        add(i, "a", i)
    for i in range(8):
        add(20 + i // 2, None, i)  # pairs share a timestamp: ties broken by id
    for i in range(6):
        add(30 + i, "b", i)
    for i in range(5):
        add(40 + i * 3, None, i)
    add(5.5, "a", 0)  # a late-recorded, earlier turn of session "a"
    if last_in_session:
        add(60, "b", 1)
    return specs


async def _pages(runtime: Runtime, org: uuid.UUID, flt: events.EventFilter) -> list[list[uuid.UUID]]:
    """Every page of the listing, 5 events a page."""
    out: list[list[uuid.UUID]] = []
    cursor: str | None = None
    async with runtime.read_session() as s:
        while True:
            rows, cursor = await events.list_events(s, org, flt, 5, cursor)
            out.append([r.id for r in rows])
            if cursor is None:
                return out


async def _reads(runtime: Runtime, tenant: Tenant, anima: uuid.UUID, base: datetime) -> dict[str, Any]:
    """What every time- or session-ordered reader returns for the anima."""
    org = tenant.org_id
    flipped = (await event_flags(runtime, anima))[0]
    filters = {
        "all": events.EventFilter(anima_id=anima),
        "session a": events.EventFilter(anima_id=anima, session_id="a"),
        "session b, since": events.EventFilter(anima_id=anima, session_id="b", since=base + timedelta(minutes=32)),
        "type": events.EventFilter(anima_id=anima, event_type="tool.call"),
        "window": events.EventFilter(anima_id=anima, since=base + timedelta(minutes=21), until=base + timedelta(minutes=41)),
        "org": events.EventFilter(),
    }  # fmt: skip
    got: dict[str, Any] = {name: await _pages(runtime, org, f) for name, f in filters.items()}
    async with runtime.engine.connect() as conn:
        head = (await conn.execute(reads._HEAD_SQL[False], {"ef": "40", "anima": anima, "org": org})).one()
        assert head.events_indexed is flipped
        got["latest session"] = head.latest_session
        gap = {"org": org, "anima": anima, "since": base, "until": base + timedelta(hours=2), "n": 2000}
        got["gap"] = list((await conn.execute(session._GAP_SQL[flipped], gap)).scalars())
    async with runtime.read_session() as s:
        got["export"] = [r.model_dump() async for r in anima_export.export_records(s, org, anima)]
    as_of = base + timedelta(minutes=70)
    for name, kwargs in {"pack": {}, "pack a": {"session_id": "a"}, "pack query": {"query": "Lisbon tea"}}.items():
        req = build_request(runtime.packs, org, anima, max_tokens=1500, as_of=as_of, **kwargs)
        compiled = await compile_pack(runtime.packs, req)
        got[name] = (compiled.fingerprint, compiled.data["content"])
    return got


@pytest.mark.parametrize("last_in_session", [False, True], ids=["session-less", "in-session"])
async def test_every_reader_returns_the_same_for_a_small_and_a_flipped_anima(
    runtime: Runtime, tenant: Tenant, last_in_session: bool
) -> None:
    base = runtime.clock().replace(microsecond=0) - timedelta(hours=3)
    anima = await new_anima(runtime, tenant.org_id)
    await add_events(runtime, tenant.org_id, anima, _history(base, last_in_session))
    assert await event_flags(runtime, anima) == (False, 0, 32 + last_in_session)
    small = await _reads(runtime, tenant, anima, base)
    assert small["latest session"] == ("b" if last_in_session else None)
    assert len(small["gap"]) == 13 and small["pack"][1]["session_memories"]  # the session reads ran
    await flip_events(runtime, anima)
    assert await event_flags(runtime, anima) == (True, 32 + last_in_session, 0)
    assert await _reads(runtime, tenant, anima, base) == small


async def test_a_small_animas_readers_read_it_by_seq(runtime: Runtime, tenant: Tenant) -> None:
    """Among many small animas, a small anima's listing, latest session and session-less run read its
    own rows through ``uq_events_anima_seq`` (its rows are in neither partial index), never the table."""
    await plans._many_animas(runtime, tenant)  # 200 animas of 500 events each
    async with runtime.engine.connect() as conn:
        anima = (
            await conn.execute(text("SELECT id FROM animas WHERE org_id = :o LIMIT 1"), {"o": tenant.org_id})
        ).scalar_one()

    async def listing() -> None:
        async with runtime.read_session() as s:
            rows, _ = await events.list_events(
                s, tenant.org_id, events.EventFilter(anima_id=anima, session_id="x"), 5, None
            )
            assert rows == []

    ((statement, params),) = [c for c in await plans._captured(runtime, listing) if "FROM events" in c[0]]
    p = {"org": tenant.org_id, "anima": anima}
    gap = p | {"since": datetime(2025, 1, 1, tzinfo=UTC), "until": datetime(2027, 1, 1, tzinfo=UTC), "n": 2000}
    for plan in (
        await plans._plan(runtime, statement, params),
        await plans._plan(runtime, reads._HEAD_SQL[False].text, p | {"ef": "40"}),
        await plans._plan(runtime, session._GAP_SQL[False].text, gap),
    ):
        assert "Seq Scan on events" not in plan and "uq_events_anima_seq" in plan, plan


def _event(anima: uuid.UUID, i: int, **extra: Any) -> EventCreate:
    return EventCreate(anima_id=anima, event_type="message.in", content=f"e{i}", **extra)


async def _batch(runtime: Runtime, org: uuid.UUID, anima: uuid.UUID, n: int, start: int = 0) -> None:
    await add_events(
        runtime, org, anima, [{"event_type": "message.in", "content": f"e{i}"} for i in range(start, start + n)]
    )


async def _single(runtime: Runtime, org: uuid.UUID, anima: uuid.UUID, i: int) -> None:
    async with driver_connection(runtime.engine) as conn:
        row, created = await event_insert.insert_one(conn, org, _event(anima, i), runtime.clock())
    assert row is not None and created


async def test_the_batch_that_crosses_the_threshold_flips_the_anima_and_its_rows(
    runtime: Runtime, tenant: Tenant
) -> None:
    org, anima = tenant.org_id, await new_anima(runtime, tenant.org_id)
    await _batch(runtime, org, anima, INDEX_THRESHOLD - 1)
    assert await event_flags(runtime, anima) == (False, 0, INDEX_THRESHOLD - 1)
    await _batch(runtime, org, anima, 2, start=INDEX_THRESHOLD - 1)  # crosses: flipped with this batch's own rows
    assert await event_flags(runtime, anima) == (True, INDEX_THRESHOLD + 1, 0)
    await _batch(runtime, org, anima, 3, start=INDEX_THRESHOLD + 1)
    await _single(runtime, org, anima, INDEX_THRESHOLD + 4)
    assert await event_flags(runtime, anima) == (True, INDEX_THRESHOLD + 5, 0)


async def test_the_single_insert_that_reaches_the_threshold_flips_the_anima(runtime: Runtime, tenant: Tenant) -> None:
    org, anima = tenant.org_id, await new_anima(runtime, tenant.org_id)
    await _batch(runtime, org, anima, INDEX_THRESHOLD - 2)
    await _single(runtime, org, anima, INDEX_THRESHOLD - 2)
    assert await event_flags(runtime, anima) == (False, 0, INDEX_THRESHOLD - 1)
    await _single(runtime, org, anima, INDEX_THRESHOLD - 1)
    assert await event_flags(runtime, anima) == (True, INDEX_THRESHOLD, 0)
    await _single(runtime, org, anima, INDEX_THRESHOLD)  # later rows copy the anima's flag
    assert await event_flags(runtime, anima) == (True, INDEX_THRESHOLD + 1, 0)


async def test_a_rolled_back_crossing_batch_flips_nothing(runtime: Runtime, tenant: Tenant) -> None:
    org, anima = tenant.org_id, await new_anima(runtime, tenant.org_id)
    await _batch(runtime, org, anima, INDEX_THRESHOLD - 1)
    data = [_event(anima, i) for i in range(5)]
    with pytest.raises(RuntimeError):
        async with runtime.unit_of_work() as s:
            await events.record_events(s, org, data, runtime.clock())
            assert (await s.execute(text("SELECT events_indexed FROM animas WHERE id = :a"), {"a": anima})).scalar()
            raise RuntimeError("the request fails after the insert")
    assert await event_flags(runtime, anima) == (False, 0, INDEX_THRESHOLD - 1)


async def test_concurrent_inserts_across_the_threshold_leave_no_row_unflagged(runtime: Runtime, tenant: Tenant) -> None:
    """Single and batch inserts into one anima race across the threshold: the flip takes the anima's
    lock, so every row committed before it is flagged by it and every row after it copies the flag."""
    org, anima = tenant.org_id, await new_anima(runtime, tenant.org_id)
    await _batch(runtime, org, anima, INDEX_THRESHOLD - 10)
    singles = [_single(runtime, org, anima, 10_000 + i) for i in range(16)]
    batches = [_batch(runtime, org, anima, 3, start=20_000 + 10 * i) for i in range(4)]
    await asyncio.gather(*singles, *batches)
    assert await event_flags(runtime, anima) == (True, INDEX_THRESHOLD - 10 + 16 + 12, 0)


async def test_an_imported_large_anima_lands_flipped(runtime: Runtime, tenant: Tenant) -> None:
    """An import writes a large anima's events with the flag set (as its inserts would have), and
    exports them again in the same order."""
    org, anima = tenant.org_id, await new_anima(runtime, tenant.org_id)
    await _batch(runtime, org, anima, INDEX_THRESHOLD)
    async with runtime.read_session() as s:
        lines = [line async for line in anima_export.export_lines(s, org, anima)]
    copy = await import_anima(runtime, org, lines, name="copy")
    assert await event_flags(runtime, copy) == (True, INDEX_THRESHOLD, 0)
    async with runtime.read_session() as s:
        again = [r async for r in anima_export.export_records(s, org, copy)]
    assert [r.content for r in again[1:]] == [f"e{i}" for i in range(INDEX_THRESHOLD)]  # type: ignore[attr-defined]
