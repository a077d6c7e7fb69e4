"""The sleep pass through the database: merges keep the union of provenance; decay, archive, reactivate."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta

import pytest
from sqlalchemy import select, text, update

from elephantasm.db.migrate import upgrade
from elephantasm.db.models import DreamAction, KnowledgeMemory, Memory
from elephantasm.domain.dreaming.curation import MergeGroup
from elephantasm.runtime import Runtime, build_runtime
from elephantasm.services.dreams import curation, run_dream
from elephantasm.services.dreams.journal import WriteContext
from elephantasm.services.keys import create_key
from elephantasm.settings import Settings
from tests.conftest import Tenant
from tests.dreams.helpers import T0, add_events, journal, new_anima, turns, variant
from tests.packs.helpers import add_memory
from tests.support.databases import create_database, drop_database

SAME = ["My favorite color is teal and I like long walks.", "Teal and long walks, noted."]


async def _memories(runtime: Runtime, anima_id: uuid.UUID) -> dict[uuid.UUID, Memory]:
    async with runtime.read_session() as session:
        rows = (await session.execute(select(Memory).where(Memory.anima_id == anima_id))).scalars()
        return {m.id: m for m in rows}


async def _links(runtime: Runtime, anima_id: uuid.UUID) -> tuple[dict, list]:
    async with runtime.read_session() as session:
        mem = (await session.execute(select(Memory.id, Memory.event_ids).where(Memory.anima_id == anima_id))).all()
        know = (
            await session.execute(
                select(KnowledgeMemory.knowledge_id, KnowledgeMemory.memory_id).where(
                    KnowledgeMemory.anima_id == anima_id
                )
            )
        ).all()
    out: dict[uuid.UUID, set[uuid.UUID]] = {}
    for m, events in mem:
        if events:
            out[m] = set(events)
    return out, list(know)


async def test_merge_keeps_union_of_provenance_and_no_dangling_reference(runtime: Runtime, tenant: Tenant) -> None:
    anima_id = await new_anima(runtime, tenant.org_id)
    first = await add_events(runtime, tenant.org_id, anima_id, turns(SAME, session="a"))
    second = await add_events(runtime, tenant.org_id, anima_id, turns(SAME, session="b", start=T0 + timedelta(hours=3)))
    run = await run_dream(runtime.dreams, tenant.org_id, anima_id)
    assert run.status == "completed" and run.counts["memories_merged"] == 1

    memories = await _memories(runtime, anima_id)
    (survivor,) = [m for m in memories.values() if m.merged_into is None]
    (merged,) = [m for m in memories.values() if m.merged_into is not None]
    assert merged.merged_into == survivor.id and merged.state == "archived"
    links, knowledge_links = await _links(runtime, anima_id)
    assert links[survivor.id] == {e.id for e in first + second}  # the union
    assert survivor.event_ids == sorted({e.id for e in first + second})  # stored once each, ascending
    assert links[merged.id] == {e.id for e in second} or links[merged.id] == {e.id for e in first}  # kept
    assert knowledge_links and all(m == survivor.id for _, m in knowledge_links)
    assert survivor.time_start == T0 and survivor.time_end == second[-1].occurred_at

    # a third copy later merges into the same survivor; earlier merged_into pointers follow it
    third = await add_events(runtime, tenant.org_id, anima_id, turns(SAME, session="c", start=T0 + timedelta(days=1)))
    run = await run_dream(runtime.dreams, tenant.org_id, anima_id)
    memories = await _memories(runtime, anima_id)
    live = [m for m in memories.values() if m.merged_into is None]
    assert len(live) == 1
    links, knowledge_links = await _links(runtime, anima_id)
    assert links[live[0].id] == {e.id for e in first + second + third}
    assert all(m.merged_into == live[0].id for m in memories.values() if m.merged_into)
    assert all(m == live[0].id for _, m in knowledge_links)
    async with runtime.read_session() as session:
        actions = [a.action for a in await journal(session, DreamAction.run_id == run.id)]
    assert "merged" in actions and "absorbed" in actions


async def test_decay_archive_and_reactivation(runtime: Runtime, tenant: Tenant) -> None:
    anima_id = await new_anima(runtime, tenant.org_id)
    await add_events(runtime, tenant.org_id, anima_id, turns(["ok then", "sure"]))
    assert (await run_dream(runtime.dreams, tenant.org_id, anima_id)).status == "completed"
    (memory_id,) = (await _memories(runtime, anima_id)).keys()

    later = runtime.clock() + timedelta(days=200)
    rt = variant(runtime, engine=None)
    rt.clock = lambda: later
    run = await run_dream(rt.dreams, tenant.org_id, anima_id)  # no new events: a sleep pass only
    assert run.events_read == 0 and run.counts["decaying"] == 1
    assert (await _memories(runtime, anima_id))[memory_id].state == "decaying"
    run = await run_dream(rt.dreams, tenant.org_id, anima_id)
    assert run.counts["archived"] == 1 and (await _memories(runtime, anima_id))[memory_id].state == "archived"

    # recalled (e.g. served in a pack) after it was archived -> active again
    recalled = later + timedelta(hours=1)
    async with runtime.unit_of_work() as session:
        await session.execute(
            text(
                "INSERT INTO memory_recalls (memory_id, org_id, anima_id, recall_count, last_recalled_at) "
                "VALUES (:m, :o, :a, 1, :at)"
            ),
            {"m": memory_id, "o": tenant.org_id, "a": anima_id, "at": recalled},
        )
    rt.clock = lambda: recalled + timedelta(hours=1)
    run = await run_dream(rt.dreams, tenant.org_id, anima_id)
    assert run.counts["reactivated"] == 1 and (await _memories(runtime, anima_id))[memory_id].state == "active"
    async with runtime.read_session() as session:
        (action,) = await journal(session, DreamAction.run_id == run.id)
    assert (action.action, action.before, action.after["state"], action.after["reason"]) == (
        "reactivated",
        {"state": "archived"},
        "active",
        "recalled",
    )


@pytest.fixture
def lone_database(pg_url: str) -> Iterator[str]:
    """A migrated database of its own (see ``lone_runtime``); dropped afterwards."""
    url = create_database(pg_url, "curation")
    upgrade(url)
    yield url
    drop_database(url)


@pytest.fixture
async def lone_runtime(settings: Settings, lone_database: str) -> AsyncIterator[tuple[Runtime, uuid.UUID]]:
    """A runtime over a database of its own, and an org in it.

    Neighbour search is an approximate (HNSW) scan; on the suite's shared database, thousands of other
    tests' memories in the same embedding space made this test's one neighbour a matter of test order.
    """
    rt = build_runtime(settings, database_url=lone_database)
    try:
        async with rt.unit_of_work() as session:
            issued = await create_key(session, rt.secret, "curation")
        yield rt, issued.org_id
    finally:
        await rt.close()


async def test_strong_match_reactivates_archived_memory(lone_runtime: tuple[Runtime, uuid.UUID]) -> None:
    runtime, org_id = lone_runtime
    tenant = Tenant(org_id, "curation", "")
    anima_id = await new_anima(runtime, tenant.org_id)
    text = ["We discussed the quarterly budget for the marketing team in detail.", "Yes, the budget plan."]
    await add_events(runtime, tenant.org_id, anima_id, turns(text))
    await run_dream(runtime.dreams, tenant.org_id, anima_id)
    (memory_id,) = (await _memories(runtime, anima_id)).keys()
    async with runtime.unit_of_work() as session:
        await session.execute(
            update(Memory)
            .where(Memory.id == memory_id)
            .values(state="archived", meta={"state_since": (T0 - timedelta(days=1)).isoformat()})
        )
    similar = ["We discussed the quarterly budget for the marketing team again.", "Yes, the budget plan."]
    await add_events(runtime, tenant.org_id, anima_id, turns(similar, session="s2", start=T0 + timedelta(days=9)))
    run = await run_dream(runtime.dreams, tenant.org_id, anima_id)
    assert run.counts["reactivated"] == 1
    assert (await _memories(runtime, anima_id))[memory_id].state == "active"


async def test_merge_sums_recall_counts_into_the_survivor(runtime: Runtime, tenant: Tenant) -> None:
    """Recall state is in memory_recalls: a survivor gains its members' recalls and keeps
    its own last recall time; a member without recalls adds nothing; the members' rows stay as they were."""
    anima_id = await new_anima(runtime, tenant.org_id)
    ids = {
        name: await add_memory(runtime, tenant, anima_id, f"{name} copy", time_end=T0)
        for name in ("kept", "recalled", "never", "alone", "gives")
    }
    seen = T0 + timedelta(days=2)
    async with runtime.unit_of_work() as session:
        for name, count, at in (("kept", 2, seen), ("recalled", 3, T0), ("gives", 4, None)):
            await session.execute(
                text(
                    "INSERT INTO memory_recalls (memory_id, org_id, anima_id, recall_count, last_recalled_at) "
                    "VALUES (:m, :o, :a, :n, :at)"
                ),
                {"m": ids[name], "o": tenant.org_id, "a": anima_id, "n": count, "at": at},
            )
        ctx = WriteContext(tenant.org_id, anima_id, uuid.uuid4(), T0 + timedelta(days=3))
        groups = [
            MergeGroup(ids["kept"], (ids["recalled"], ids["never"]), 0.99),
            MergeGroup(ids["alone"], (ids["gives"],), 0.99),
        ]
        await curation._merge(session, ctx, groups, [])
    async with runtime.read_session() as session:
        rows = {
            r[0]: r[1:]
            for r in (
                await session.execute(
                    text("SELECT memory_id, recall_count, last_recalled_at FROM memory_recalls WHERE anima_id = :a"),
                    {"a": anima_id},
                )
            ).all()
        }
    assert rows == {ids["kept"]: (5, seen), ids["recalled"]: (3, T0), ids["alone"]: (4, None), ids["gives"]: (4, None)}
