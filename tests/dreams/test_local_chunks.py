"""The in-process dream path: offline engine + local embedder lock, distil and write a chunk in one
transaction, so each event is updated once, and a failed chunk leaves nothing claimed or written."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select, text

from elephantasm.db.models import Event, Memory
from elephantasm.domain.dreaming import OfflineEngine
from elephantasm.llm.embedders import CachedEmbedder, HashEmbedder, OpenAIEmbedder
from elephantasm.runtime import Runtime
from elephantasm.services.dreams import run_dream
from elephantasm.services.dreams import writer as writer_module
from elephantasm.services.dreams.runner import in_process
from tests.conftest import Tenant
from tests.dreams.helpers import add_events, live_provenance, new_anima, pending_ids, turns


class AwaitingEngine(OfflineEngine):
    """A subclass may await anything (an LLM, a queue): it keeps the claim/write split."""


def _chat(n: int) -> list[dict]:
    return turns([f"I keep a {w} diary and water the {w} plants ({i})." for i, w in
                  enumerate(["fern", "cactus", "orchid", "basil", "mint"] * (n // 5 + 1))][:n])


def test_only_the_stock_offline_engine_with_a_local_embedder_runs_in_process(runtime: Runtime) -> None:
    remote = OpenAIEmbedder(client=None, model="m")  # type: ignore[arg-type]  # never called here
    assert in_process(OfflineEngine(), runtime.embedder)  # the default (WordLlama) behind its wrappers
    assert in_process(OfflineEngine(), CachedEmbedder(HashEmbedder()))
    assert not in_process(OfflineEngine(), CachedEmbedder(remote))
    assert not in_process(AwaitingEngine(), runtime.embedder)


async def test_each_event_is_claimed_and_marked_in_one_update(runtime: Runtime, tenant: Tenant) -> None:
    anima_id = await new_anima(runtime, tenant.org_id)
    events = await add_events(runtime, tenant.org_id, anima_id, _chat(12))
    run = await run_dream(runtime, tenant.org_id, anima_id)
    assert run.status == "completed" and run.events_read == len(events)
    async with runtime.read_session() as session:
        rows = (await session.execute(
            select(Event.claimed_by, Event.claimed_at, Event.distilled_at, Event.fts).where(Event.anima_id == anima_id)
        )).all()
    # Stamped together (one update, one new row version), and a distilled event keeps no tsvector.
    assert {r.claimed_by for r in rows} == {run.id}
    assert all(r.claimed_at == r.distilled_at is not None and r.fts is None for r in rows)
    assert sorted(e for ids in (await live_provenance(runtime, anima_id)).values() for e in ids) == sorted(
        e.id for e in events
    )


async def test_a_pending_event_keeps_its_tsvector_for_full_text_matching(runtime: Runtime, tenant: Tenant) -> None:
    anima_id = await new_anima(runtime, tenant.org_id)
    (event,) = await add_events(runtime, tenant.org_id, anima_id, _chat(1))
    async with runtime.read_session() as session:
        matched = (await session.execute(
            text("SELECT fts @@ to_tsquery('english', 'diary') FROM events WHERE id = :id"), {"id": event.id}
        )).scalar_one()
    assert matched is True


async def test_a_chunk_that_fails_to_write_leaves_its_events_pending_and_unclaimed(
    runtime: Runtime, tenant: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    anima_id = await new_anima(runtime, tenant.org_id)
    events = await add_events(runtime, tenant.org_id, anima_id, _chat(10))

    async def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("disk full")

    monkeypatch.setattr(writer_module, "write_knowledge", broken)
    failed = await run_dream(runtime, tenant.org_id, anima_id)
    assert failed.status == "failed" and "disk full" in (failed.error or "")
    assert await pending_ids(runtime, anima_id) == {e.id for e in events}
    async with runtime.read_session() as session:
        claimed = (await session.execute(select(func.count()).select_from(Event).where(
            Event.anima_id == anima_id, Event.claimed_by.is_not(None)))).scalar_one()
        memories = (await session.execute(select(func.count()).select_from(Memory).where(
            Memory.anima_id == anima_id))).scalar_one()
    assert claimed == 0 and memories == 0  # all of the chunk or nothing

    monkeypatch.undo()
    done = await run_dream(runtime, tenant.org_id, anima_id)
    assert done.status == "completed" and done.events_read == len(events)
    assert await pending_ids(runtime, anima_id) == set()
