"""Knowledge through the database: dedupe across memories and runs, contradiction → supersede + history."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import timedelta

import httpx
from sqlalchemy import select

from elephantasm.db.models import DreamAction, Knowledge, KnowledgeMemory, Memory
from elephantasm.domain.dreaming import KnowledgeDraft, OfflineEngine
from elephantasm.runtime import Runtime
from elephantasm.services.dreams import run_dream
from tests.conftest import Tenant
from tests.dreams.helpers import T0, add_events, journal, new_anima, turns


async def _knowledge(runtime: Runtime, anima_id: uuid.UUID, subject: str) -> list[Knowledge]:
    async with runtime.read_session() as session:
        stmt = select(Knowledge).where(Knowledge.anima_id == anima_id, Knowledge.subject_key == subject)
        return list((await session.execute(stmt.order_by(Knowledge.valid_from))).scalars())


async def _dream(
    runtime: Runtime,
    tenant: Tenant,
    anima_id: uuid.UUID,
    texts: list[str],
    start=T0,  # type: ignore[no-untyped-def]
    session: str = "s1",
) -> None:
    await add_events(runtime, tenant.org_id, anima_id, turns(texts, session=session, start=start))
    run = await run_dream(runtime.dreams, tenant.org_id, anima_id)
    assert run.status == "completed", run.error


async def test_contradiction_supersedes_and_keeps_history(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    anima_id = await new_anima(runtime, tenant.org_id)
    await _dream(runtime, tenant, anima_id, ["I live in Paris.", "Paris, lovely."])
    await _dream(
        runtime,
        tenant,
        anima_id,
        ["I moved to Berlin last week.", "Welcome to Berlin!"],
        start=T0 + timedelta(days=30),
        session="s2",
    )
    old, new = await _knowledge(runtime, anima_id, "user.home_city")
    assert (old.meta["value"], new.meta["value"]) == ("Paris", "Berlin")
    assert old.superseded_by == new.id and old.valid_to == new.valid_from and new.valid_to is None
    assert new.valid_from == T0 + timedelta(days=30)  # when it was said, not when it was distilled

    h = tenant.headers
    current = (await client.get("/api/knowledge", params={"anima_id": str(anima_id)}, headers=h)).json()["items"]
    assert [k["content"] for k in current if k["subject_key"] == "user.home_city"] == ["User lives in Berlin."]
    everything = (
        await client.get("/api/knowledge", params={"anima_id": str(anima_id), "include_superseded": "true"}, headers=h)
    ).json()["items"]
    assert {str(old.id), str(new.id)} <= {k["id"] for k in everything}
    for start in (old.id, new.id):  # the chain reads the same from either end
        history = (await client.get(f"/api/knowledge/{start}/history", headers=h)).json()
        assert [k["id"] for k in history] == [str(new.id), str(old.id)]
    async with runtime.read_session() as session:
        actions = await journal(session, DreamAction.anima_id == anima_id, DreamAction.action == "superseded")
    assert [(a.target_id, a.after["superseded_by"]) for a in actions] == [(old.id, str(new.id))]

    # moving back makes a third version; the history keeps all three
    await _dream(
        runtime, tenant, anima_id, ["I live in Paris now.", "Back home!"], start=T0 + timedelta(days=60), session="s3"
    )
    chain = await _knowledge(runtime, anima_id, "user.home_city")
    assert [k.meta["value"] for k in chain] == ["Paris", "Berlin", "Paris"]
    assert [k.valid_to is None for k in chain] == [False, False, True]


async def test_back_dated_statement_is_stored_as_history(runtime: Runtime, tenant: Tenant) -> None:
    anima_id = await new_anima(runtime, tenant.org_id)
    await _dream(runtime, tenant, anima_id, ["I moved to Berlin.", "Nice."], start=T0 + timedelta(days=30))
    # an older statement arrives later (back-dated import): it must not override the newer one
    await _dream(runtime, tenant, anima_id, ["I live in Paris.", "Ok."], start=T0, session="old")
    paris, berlin = await _knowledge(runtime, anima_id, "user.home_city")
    assert (paris.meta["value"], berlin.meta["value"]) == ("Paris", "Berlin")
    assert berlin.valid_to is None and paris.superseded_by == berlin.id and paris.valid_to == berlin.valid_from


async def test_same_fact_in_many_memories_is_one_item_with_all_provenance(runtime: Runtime, tenant: Tenant) -> None:
    anima_id = await new_anima(runtime, tenant.org_id)
    await _dream(runtime, tenant, anima_id, ["My favorite color is teal.", "Teal, noted."])
    await _dream(
        runtime,
        tenant,
        anima_id,
        ["My favourite colour is Teal!", "Still teal."],
        start=T0 + timedelta(days=1),
        session="s2",
    )
    (item,) = await _knowledge(runtime, anima_id, "user.favorite_color")
    async with runtime.read_session() as session:
        links = list(
            (
                await session.execute(select(KnowledgeMemory.memory_id).where(KnowledgeMemory.knowledge_id == item.id))
            ).scalars()
        )
        events = {
            e
            for ids in (await session.execute(select(Memory.event_ids).where(Memory.id.in_(links)))).scalars()
            for e in ids
        }
    # A semantic embedder may also merge the two near-duplicate memories in the sleep pass; either
    # way the one item traces back to all four events of both runs.
    assert len(events) == 4 and item.confidence > 0.85


class FixedKnowledgeEngine(OfflineEngine):
    """Offline memories, but exactly the given knowledge statements (no subject key), cited by memory 0."""

    def __init__(self, statements: list[str]) -> None:
        super().__init__()
        self.statements = statements

    async def distil(self, events, existing_identity):  # type: ignore[no-untyped-def]
        result = await super().distil(events, existing_identity)
        first = result.memories[0]
        drafts = tuple(
            KnowledgeDraft(
                type="PRINCIPLE",
                topic="travel",
                subject_key=None,
                value=None,
                content=text,
                summary=text,
                confidence=0.6,
                importance=0.5,
                source_event_ids=first.event_ids[:1],
                source_memory_indices=(0,),
            )
            for text in self.statements
        )
        return replace(result, knowledge=drafts, identity=None)


async def test_near_duplicate_by_similarity_is_corroborated(runtime: Runtime, tenant: Tenant) -> None:
    """Different normalised text (so a different hash) but cosine >= 0.95: one item, two memories."""
    anima_id = await new_anima(runtime, tenant.org_id)
    a, b = "User prefers window seats on long flights.", "The user prefers window seats on long flights!"
    unrelated = "User lives in Berlin."
    for n, statements in enumerate(([a], [b, unrelated])):
        texts = [f"Let us talk about trip number {n} to {['Oslo', 'Lima'][n]}.", f"Sure, trip {n} it is."]
        await add_events(runtime, tenant.org_id, anima_id, turns(texts, session=f"s{n}", start=T0 + timedelta(days=n)))
        run = await run_dream(
            replace(runtime.dreams, distiller=FixedKnowledgeEngine(statements)), tenant.org_id, anima_id
        )
        assert run.status == "completed", run.error
    async with runtime.read_session() as session:
        items = list((await session.execute(select(Knowledge).where(Knowledge.anima_id == anima_id))).scalars())
        links = list(
            (
                await session.execute(
                    select(KnowledgeMemory.knowledge_id, KnowledgeMemory.memory_id).where(
                        KnowledgeMemory.anima_id == anima_id
                    )
                )
            ).all()
        )
    assert sorted(k.content for k in items) == sorted([a, unrelated])
    window = next(k for k in items if k.content == a)
    assert len({m for kid, m in links if kid == window.id}) == 2 and window.confidence == 0.65
    assert run.counts["knowledge_deduplicated"] == 1 and run.knowledge_created == 1
