"""Events carry no org_id or anima_id: each reader reaches an event's org through its
anima (by ``anima_key``). Every reader changed for that is called here with another org's ids and
must return nothing of theirs, and with the owner's ids must return them (so "nothing" is not vacuous).
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select, text

from elephantasm.db.driver_fetch import fetch
from elephantasm.db.models import Memory
from elephantasm.db.queries import inspector as links
from elephantasm.db.raw import driver_connection
from elephantasm.domain.errors import NotFoundError
from elephantasm.runtime import Runtime
from elephantasm.schemas.events import EventCreate
from elephantasm.services import anima_export, event_copy, event_insert, events
from elephantasm.services.dreams import claims, memories, run_dream
from elephantasm.services.packs import event_match, session, sql
from tests.conftest import Tenant
from tests.dreams.helpers import T0, add_events, new_anima, turns
from tests.support.event_animas import event_flags, flip_events

CHAT = ["I live in Lisbon.", "Noted.", "I prefer tea over coffee.", "Tea it is."]


async def _owned(runtime: Runtime, tenant: Tenant) -> tuple[uuid.UUID, list[uuid.UUID], uuid.UUID]:
    """A dreamed anima of ``tenant`` with two more pending, dedupe-keyed, session-less events: the
    anima, its event ids and one of its memories."""
    anima = await new_anima(runtime, tenant.org_id)
    stored = await add_events(runtime, tenant.org_id, anima, turns(CHAT))
    await run_dream(runtime.dreams, tenant.org_id, anima, trigger="test")
    late = [{**t, "session_id": None, "dedupe_key": f"k{i}"} for i, t in enumerate(turns(CHAT[:2], start=T0))]
    stored += await add_events(runtime, tenant.org_id, anima, late)
    assert {e.anima_id for e in stored} == {anima}  # derived, also on the rows record_events returns
    async with runtime.read_session() as s:
        memory = (await s.execute(select(Memory.id).where(Memory.anima_id == anima).limit(1))).scalar_one()
    return anima, [e.id for e in stored], memory


async def _rows(runtime: Runtime, statement: Any, params: dict[str, Any]) -> list[Any]:
    async with runtime.engine.connect() as conn:
        return list(await fetch(conn, statement, params))


@pytest.fixture(params=[False, True], ids=["small", "flipped"])
async def owned(
    runtime: Runtime, tenant: Tenant, request: pytest.FixtureRequest
) -> tuple[uuid.UUID, list[uuid.UUID], uuid.UUID]:
    """As :func:`_owned`; flipped into the time and session indexes or not."""
    got = await _owned(runtime, tenant)
    if request.param:
        await flip_events(runtime, got[0])
    return got


async def test_event_reads_never_cross_orgs(
    runtime: Runtime, tenant: Tenant, other_tenant: Tenant, owned: tuple[uuid.UUID, list[uuid.UUID], uuid.UUID]
) -> None:
    anima, ids, memory = owned
    mine, theirs = tenant.org_id, other_tenant.org_id
    async with runtime.read_session() as s:
        assert (await events.get_event(s, mine, ids[0])).anima_id == anima
        with pytest.raises(NotFoundError):
            await events.get_event(s, theirs, ids[0])
        listed, _ = await events.list_events(s, mine, events.EventFilter(), 100, None)
        assert {e.id for e in listed} == set(ids) and {e.anima_id for e in listed} == {anima}
        assert (await events.list_events(s, theirs, events.EventFilter(), 100, None))[0] == []
        with pytest.raises(NotFoundError):
            await events.list_events(s, theirs, events.EventFilter(anima_id=anima), 100, None)
        assert {e.id for e in await memories.memory_events(s, mine, memory)} <= set(ids)
        with pytest.raises(NotFoundError):
            await memories.memory_events(s, theirs, memory)
        assert await links.memories_of_event(s, mine, ids[0])
        assert await links.memories_of_event(s, theirs, ids[0]) == []
        assert await claims.count_pending(s, mine, anima, 10**6) == 2
        assert await claims.count_pending(s, theirs, anima, 10**6) == 0
    # An export reads in a snapshot of its own: it takes a session whose transaction has not begun.
    async with runtime.read_session() as s:
        assert len([r async for r in anima_export.export_records(s, mine, anima)]) > len(ids)
    async with runtime.read_session() as s:
        with pytest.raises(NotFoundError):
            async for _ in anima_export.export_records(s, theirs, anima):
                pass


async def test_compile_statements_never_cross_orgs(
    runtime: Runtime, tenant: Tenant, other_tenant: Tenant, owned: tuple[uuid.UUID, list[uuid.UUID], uuid.UUID]
) -> None:
    anima, ids, _ = owned
    for org, expected in ((tenant.org_id, 2), (other_tenant.org_id, 0)):
        p = {"org": org, "anima": anima}
        assert len(await _rows(runtime, text(f"SELECT e.id FROM events e WHERE {sql.EVENT_PENDING}"), p)) == expected
        gap = p | {"since": T0 - timedelta(days=1), "until": T0 + timedelta(days=1), "n": 10}
        indexed = (await event_flags(runtime, anima))[0]
        assert len(await _rows(runtime, session._GAP_SQL[indexed], gap)) == expected
        assert len(await _rows(runtime, event_match._BY_ID, p | {"ids": ids[-2:]})) == expected


async def test_dedupe_hits_never_return_another_orgs_event(
    runtime: Runtime, tenant: Tenant, other_tenant: Tenant, owned: tuple[uuid.UUID, list[uuid.UUID], uuid.UUID]
) -> None:
    anima, ids, _ = owned
    data = EventCreate(anima_id=anima, event_type="message.in", content="again", dedupe_key="k0")
    async with driver_connection(runtime.engine) as conn:
        row, created = await event_insert.insert_one(conn, tenant.org_id, data, runtime.clock())
        assert row is not None and (row["id"], row["anima_id"], created) == (ids[-2], anima, False)
        assert await event_insert.insert_one(conn, other_tenant.org_id, data, runtime.clock()) == (None, False)
    async with runtime.unit_of_work() as s:
        (hit,) = await event_copy.copy_events(await s.connection(), tenant.org_id, [data], runtime.clock())
        assert (hit.row["id"], hit.row["anima_id"], hit.created) == (ids[-2], anima, False)
    with pytest.raises(NotFoundError):
        async with runtime.unit_of_work() as s:
            await event_copy.copy_events(await s.connection(), other_tenant.org_id, [data], runtime.clock())
    for org, expected in ((tenant.org_id, [ids[-2]]), (other_tenant.org_id, [])):
        found = await _rows(runtime, event_copy._EXISTING, {"org": org, "animas": [anima], "keys": ["k0"]})
        assert [r["id"] for r in found] == expected
