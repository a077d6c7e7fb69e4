"""The offline pipeline end to end into Postgres: memories, provenance, knowledge, identity, journal."""

from __future__ import annotations

from sqlalchemy import select

from elephantasm.db.models import DreamAction, DreamChunk, Knowledge
from elephantasm.runtime import Runtime
from elephantasm.services.dreams import run_dream
from tests.conftest import Tenant
from tests.dreams.helpers import add_events, journal, live_provenance, new_anima, pending_ids, turns

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
    run = await run_dream(runtime.dreams, tenant.org_id, anima_id, trigger="test")
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
        actions = await journal(session, DreamAction.run_id == run.id)
        claimed = set(
            (await session.execute(select(DreamChunk.run_id).where(DreamChunk.anima_id == anima_id))).scalars()
        )
    assert any("teal" in k.content.lower() for k in knowledge)
    assert {a.action for a in actions} >= {"created"}
    assert claimed == {run.id}  # the run that distilled each event stays on record


def _shape(memories, events_by_id, prov):  # type: ignore[no-untyped-def]
    """Memories with ids replaced by event positions: comparable across animas."""
    return sorted(
        (
            m.summary,
            m.content,
            m.importance,
            m.confidence,
            m.state,
            m.session_id,
            m.time_start,
            m.time_end,
            tuple(sorted(events_by_id[e] for e in prov.get(m.id, ()))),
            m.merged_into is None,
        )
        for m in memories
    )


async def _snapshot(runtime: Runtime, anima_id, events):  # type: ignore[no-untyped-def]
    from elephantasm.db.models import Identity, Memory

    position = {e.id: i for i, e in enumerate(events)}
    prov = await live_provenance(runtime, anima_id)
    async with runtime.read_session() as session:
        memories = list((await session.execute(select(Memory).where(Memory.anima_id == anima_id))).scalars())
        knowledge = sorted(
            (k.type, k.topic, k.subject_key, k.content, k.confidence, k.importance, k.valid_from, k.valid_to is None)
            for k in (await session.execute(select(Knowledge).where(Knowledge.anima_id == anima_id))).scalars()
        )
        ident = (await session.execute(select(Identity).where(Identity.anima_id == anima_id))).scalar_one()
    return (
        _shape(memories, position, prov),
        knowledge,
        (ident.personality_type, ident.communication_style, ident.self, ident.prose, ident.version),
    )


async def test_offline_output_is_identical_for_the_same_events(runtime: Runtime, tenant: Tenant) -> None:
    specs = turns(CHAT * 3) + turns(CHAT[::-1], session="s2") + turns(["I moved to Berlin.", "Okay!"], session="s3")
    snapshots = []
    for name in ("twin-a", "twin-b"):
        anima_id = await new_anima(runtime, tenant.org_id, name)
        events = await add_events(runtime, tenant.org_id, anima_id, specs)
        assert (await run_dream(runtime.dreams, tenant.org_id, anima_id)).status == "completed"
        snapshots.append(await _snapshot(runtime, anima_id, events))
    assert snapshots[0] == snapshots[1]
    # A handful of replies describe no personality yet (identity only with evidence), but their counts are kept.
    assert snapshots[0][0] and snapshots[0][1] and snapshots[0][2][2]["style_stats"]["messages"] > 0
