"""Events recorded while runs go (both insert paths, some back-dated) are each distilled exactly once,
on both dream paths; the watermark never passes an event a run did not take."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta

import pytest
from sqlalchemy import select

from elephantasm.db.models import Anima, DreamRun, Event
from elephantasm.db.raw import driver_connection
from elephantasm.db.scopes import of_anima
from elephantasm.domain.dreaming import OfflineEngine
from elephantasm.runtime import Runtime
from elephantasm.schemas.events import EventCreate
from elephantasm.services.dreams import run_dream
from elephantasm.services.event_insert import insert_one
from tests.conftest import Tenant
from tests.dreams.helpers import T0, add_events, live_provenance, new_anima, pending_ids, variant


class YieldingEngine(OfflineEngine):
    """Offline, but it awaits while distilling: the claim/write path with no transaction open."""

    async def distil(self, events, existing_identity):  # type: ignore[no-untyped-def]
        await asyncio.sleep(0.01)
        return await super().distil(events, existing_identity)


def _spec(writer: str, i: int) -> dict:
    # Every third event is back-dated by days: pending is about seq, never about occurred_at.
    back = timedelta(days=3) if i % 3 == 0 else timedelta(0)
    return {
        "event_type": "message.in" if i % 2 else "message.out",
        "session_id": writer,
        "content": f"{writer} turn {i}: the {['kiln', 'sloop', 'quince', 'tabla'][i % 4]} again ({i}).",
        "occurred_at": T0 + timedelta(minutes=i) - back,
    }


@pytest.mark.parametrize("engine", [OfflineEngine(), YieldingEngine()], ids=["in-process", "claimed"])
async def test_events_recorded_during_runs_are_each_distilled_once(
    runtime: Runtime, tenant: Tenant, engine: OfflineEngine
) -> None:
    anima_id = await new_anima(runtime, tenant.org_id)
    rt = variant(runtime, engine=engine, dreamer_chunk_events=7)
    recorded: list[uuid.UUID] = []
    writing = True

    async def batches(writer: str) -> None:
        for b in range(8):
            events = await add_events(rt, tenant.org_id, anima_id, [_spec(writer, b * 4 + i) for i in range(4)])
            recorded.extend(e.id for e in events)
            await asyncio.sleep(0.003)

    async def singles() -> None:
        for i in range(20):
            async with driver_connection(rt.engine) as conn:
                row, created = await insert_one(
                    conn, tenant.org_id, EventCreate(anima_id=anima_id, **_spec("one", i)), rt.clock()
                )
            assert created and row is not None
            recorded.append(row["id"])
            await asyncio.sleep(0.002)

    async def dreams() -> None:
        while writing:
            run = await run_dream(rt.dreams, tenant.org_id, anima_id)
            assert run.status == "completed", run.error
            await asyncio.sleep(0)

    async def write_all() -> None:
        nonlocal writing
        try:
            await asyncio.gather(batches("a"), batches("b"), singles())
        finally:
            writing = False

    await asyncio.gather(write_all(), dreams())
    while await pending_ids(rt, anima_id):
        assert (await run_dream(rt.dreams, tenant.org_id, anima_id)).status == "completed"

    cited = [e for ids in (await live_provenance(rt, anima_id)).values() for e in ids]
    assert sorted(cited) == sorted(recorded) and len(recorded) == 84  # every event, exactly once
    async with rt.read_session() as session:
        seqs = sorted((await session.execute(select(Event.seq).where(*of_anima(Event, anima_id)))).scalars())
        anima = (await session.execute(select(Anima).where(Anima.id == anima_id))).scalar_one()
        runs = list((await session.execute(select(DreamRun).where(DreamRun.anima_id == anima_id))).scalars())
    assert seqs == list(range(1, 85)) and anima.event_seq == anima.distilled_seq == 84
    assert sum(r.events_read for r in runs) == 84 and len(runs) >= 2
