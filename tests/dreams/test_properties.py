"""Property: over random conversations (back-dated, interleaved sessions, several deliveries and
runs), every event ends in a memory, exactly once among live memories, and each memory's time span
and session are exactly those of the events it cites. Through the real database."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from elephantasm.db.models import Event, Memory
from elephantasm.db.scopes import of_anima
from elephantasm.runtime import Runtime
from elephantasm.services.dreams import run_dream
from tests.dreams.helpers import T0, add_events, live_provenance, new_anima, pending_ids, variant

WORDS = [
    "paris",
    "teal",
    "budget",
    "piano",
    "I",
    "live",
    "in",
    "my",
    "favorite",
    "color",
    "is",
    "we",
    "plan",
    "the",
    "trip",
    "tomorrow",
    "!",
    "?",
    "please",
    "thanks",
    "code",
    "deploy",
    "sushi",
    "love",
]

event_spec = st.fixed_dictionaries(
    {
        "inbound": st.booleans(),
        "session_id": st.sampled_from(["a", "b", "c", None]),
        "minute": st.integers(min_value=0, max_value=5000),
        "content": st.lists(st.sampled_from(WORDS), min_size=1, max_size=25).map(" ".join),
        "importance_score": st.none() | st.floats(min_value=0, max_value=1),
    }
)
deliveries = st.lists(st.lists(event_spec, min_size=1, max_size=30), min_size=1, max_size=3)


def _spec(raw: dict) -> dict:
    return {
        "event_type": "message.in" if raw["inbound"] else "message.out",
        "role": "user" if raw["inbound"] else "assistant",
        "content": raw["content"],
        "session_id": raw["session_id"],
        "importance_score": raw["importance_score"],
        "occurred_at": T0 + timedelta(minutes=raw["minute"]),
    }


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(batches=deliveries, chunk=st.sampled_from([7, 50, 2000]))
async def test_every_event_ends_in_exactly_its_memories(runtime: Runtime, batches, chunk) -> None:  # type: ignore[no-untyped-def]
    from tests.conftest import make_tenant

    tenant = await make_tenant(runtime, "prop")
    anima_id = await new_anima(runtime, tenant.org_id)
    rt = variant(runtime, dreamer_chunk_events=chunk)
    events = []
    for batch in batches:  # later deliveries may be back-dated relative to what was already distilled
        events += await add_events(rt, tenant.org_id, anima_id, [_spec(b) for b in batch])
        run = await run_dream(rt.dreams, tenant.org_id, anima_id)
        assert run.status == "completed", run.error
    assert await pending_ids(rt, anima_id) == set()

    prov = await live_provenance(rt, anima_id)
    cited = [e for ids in prov.values() for e in ids]
    assert sorted(cited) == sorted(e.id for e in events)
    by_id = {e.id: e for e in events}
    async with rt.read_session() as session:
        memories = {
            m.id: m
            for m in (
                await session.execute(select(Memory).where(Memory.anima_id == anima_id, Memory.merged_into.is_(None)))
            ).scalars()
        }
        distilled = set(
            (
                await session.execute(
                    select(Event.id).where(*of_anima(Event, anima_id), Event.distilled_at.is_not(None))
                )
            ).scalars()
        )
    assert distilled == set(by_id)
    for memory_id, ids in prov.items():
        memory, cited_events = memories[memory_id], [by_id[i] for i in ids]
        assert memory.time_start == min(e.occurred_at for e in cited_events)
        assert memory.time_end == max(e.occurred_at for e in cited_events)
        sessions = {e.session_id for e in cited_events}
        assert memory.session_id == (sessions.pop() if len(sessions) == 1 else None)
