"""The offline pipeline end to end into Postgres: memories, provenance, knowledge, identity, journal."""

from __future__ import annotations

from sqlalchemy import select

from elephantasm.db.models import DreamAction, Event, Knowledge
from elephantasm.runtime import Runtime
from elephantasm.services.dreams import run_dream
from tests.conftest import Tenant
from tests.dreams.helpers import add_events, live_provenance, new_anima, pending_ids, turns

CHAT = [
    "Hi! I live in Paris and my favorite color is teal.",
    "Nice to meet you. Paris is lovely; teal is a calm colour.",
    "Can you help me plan a trip to Rome next month?",
    "Certainly. Rome in spring is wonderful; I suggest three days.",
    "Great, please remember I prefer trains over planes.",
    "Noted: trains over planes. I will plan around rail routes.",
]


async def test_offline_run_writes_everything_with_exact_provenance(runtime: Runtime, tenant: Tenant) -> None:
    anima_id = await new_anima(runtime, tenant.org_id)
    events = await add_events(runtime, tenant.org_id, anima_id, turns(CHAT) + turns(CHAT[:2], session="s2"))
    run = await run_dream(runtime, tenant.org_id, anima_id, trigger="test")
    assert run.status == "completed", run.error
    assert run.events_read == len(events) and run.engine == "offline"
    assert run.memories_created >= 2 and run.finished_at is not None

    prov = await live_provenance(runtime, anima_id)
    assert len(prov) == run.memories_created
    assert set().union(*prov.values()) == {e.id for e in events}
    assert sum(len(v) for v in prov.values()) == len(events)  # each event in exactly one memory
    assert await pending_ids(runtime, anima_id) == set()

    async with runtime.read_session() as session:
        knowledge = list((await session.execute(select(Knowledge).where(Knowledge.anima_id == anima_id))).scalars())
        actions = list((await session.execute(select(DreamAction).where(DreamAction.run_id == run.id))).scalars())
        claimed = set((await session.execute(select(Event.claimed_by).where(Event.anima_id == anima_id))).scalars())
    assert any("teal" in k.content.lower() for k in knowledge)
    assert {a.action for a in actions} >= {"created"}
    assert claimed == {run.id}  # the run that distilled each event stays on record
