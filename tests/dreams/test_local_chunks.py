"""The in-process dream path: offline engine + local embedder read, distil and write a chunk in one
transaction; no event row is ever written, and a failed chunk leaves nothing claimed or written."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select, text

from elephantasm.db.models import Anima, DreamChunk, Event, Memory
from elephantasm.db.scopes import of_anima
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
    return turns(
        [
            f"I keep a {w} diary and water the {w} plants ({i})."
            for i, w in enumerate(["fern", "cactus", "orchid", "basil", "mint"] * (n // 5 + 1))
        ][:n]
    )


def test_only_the_stock_offline_engine_with_a_local_embedder_runs_in_process(runtime: Runtime) -> None:
    remote = OpenAIEmbedder(client=None, model="m")  # type: ignore[arg-type]  # never called here
    assert in_process(OfflineEngine(), runtime.embedder)  # the default (WordLlama) behind its wrappers
    assert in_process(OfflineEngine(), CachedEmbedder(HashEmbedder()))
    assert not in_process(OfflineEngine(), CachedEmbedder(remote))
    assert not in_process(AwaitingEngine(), runtime.embedder)


async def _row_versions(runtime: Runtime, anima_id) -> dict:  # type: ignore[no-untyped-def]
    async with runtime.read_session() as session:
        rows = await session.execute(
            text(
                "SELECT id, xmin::text AS v, ctid::text AS at FROM events "
                "WHERE anima_key = (SELECT key FROM animas WHERE id = :a)"
            ),
            {"a": anima_id},
        )
        return {r.id: (r.v, r.at) for r in rows}


async def test_distilling_never_writes_an_event_row(runtime: Runtime, tenant: Tenant) -> None:
    anima_id = await new_anima(runtime, tenant.org_id)
    events = await add_events(runtime, tenant.org_id, anima_id, _chat(12))
    before = await _row_versions(runtime, anima_id)
    run = await run_dream(runtime.dreams, tenant.org_id, anima_id)
    assert run.status == "completed" and run.events_read == len(events)
    assert await _row_versions(runtime, anima_id) == before  # same row versions, where they were
    async with runtime.read_session() as session:
        chunks = (await session.execute(select(DreamChunk).where(DreamChunk.anima_id == anima_id))).scalars().all()
        stamped = (await session.execute(select(Event.distilled_at).where(*of_anima(Event, anima_id)))).scalars().all()
        watermark = (await session.execute(select(Anima.distilled_seq).where(Anima.id == anima_id))).scalar_one()
    # One chunk, recorded by the run in the write (claimed and distilled at once), covering every seq.
    ((chunk),) = chunks
    assert (chunk.run_id, chunk.first_seq, chunk.last_seq, watermark) == (run.id, 1, len(events), len(events))
    assert chunk.claimed_at == chunk.distilled_at is not None and set(stamped) == {chunk.distilled_at}
    assert sorted(e for ids in (await live_provenance(runtime, anima_id)).values() for e in ids) == sorted(
        e.id for e in events
    )


async def test_a_chunk_that_fails_to_write_leaves_its_events_pending_and_unclaimed(
    runtime: Runtime, tenant: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    anima_id = await new_anima(runtime, tenant.org_id)
    events = await add_events(runtime, tenant.org_id, anima_id, _chat(10))

    async def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("disk full")

    monkeypatch.setattr(writer_module, "write_knowledge", broken)
    failed = await run_dream(runtime.dreams, tenant.org_id, anima_id)
    assert failed.status == "failed" and "disk full" in (failed.error or "")
    assert await pending_ids(runtime, anima_id) == {e.id for e in events}
    async with runtime.read_session() as session:
        chunks = (
            await session.execute(select(func.count()).select_from(DreamChunk).where(DreamChunk.anima_id == anima_id))
        ).scalar_one()
        memories = (
            await session.execute(select(func.count()).select_from(Memory).where(Memory.anima_id == anima_id))
        ).scalar_one()
    assert chunks == 0 and memories == 0  # all of the chunk or nothing

    monkeypatch.undo()
    done = await run_dream(runtime.dreams, tenant.org_id, anima_id)
    assert done.status == "completed" and done.events_read == len(events)
    assert await pending_ids(runtime, anima_id) == set()
