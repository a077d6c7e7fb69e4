"""Write one distilled chunk in one journaled transaction: all of it, or nothing.

Memories (with their provenance), knowledge (dedupe / supersede), an identity version and the
chunk recorded distilled (the anima's watermark moved past it; no event row is written) commit
together. Embeddings are computed before the transaction opens (the embedder may be remote),
except on the in-process path (``runner.in_process``), which writes with :func:`write_in`.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncSession

from elephantasm.db import size_switches
from elephantasm.db.bulk import insert_rows
from elephantasm.db.models import Memory
from elephantasm.db.tables import table_of
from elephantasm.domain.dreaming import DistillError, DistillResult, EventInput, group_events, memory_from_group
from elephantasm.domain.fact_turns import fact_turns
from elephantasm.domain.lean import lean_text
from elephantasm.ids import uuid7
from elephantasm.llm.embedders import Embedder
from elephantasm.services.dreams.claims import EVENT_FIELDS, Chunk, mark_distilled
from elephantasm.services.dreams.deps import DreamDeps
from elephantasm.services.dreams.identity import apply_identity_draft
from elephantasm.services.dreams.journal import JournaledWrite, WriteContext
from elephantasm.services.dreams.knowledge import write_knowledge
from elephantasm.services.dreams.runs import RunLostError
from elephantasm.services.turn_blobs import encode_turns

if TYPE_CHECKING:
    from elephantasm.schemas.transfer import EventRecord

_MEMORIES = table_of(Memory)


def to_inputs(rows: Sequence[Row | EventRecord]) -> list[EventInput]:
    """Claimed event rows (or an export's event records) as engine inputs, indexed in order."""
    return [
        EventInput(index=i, meta=r.meta or {}, **{name: getattr(r, name) for name in EVENT_FIELDS})
        for i, r in enumerate(rows)
    ]


def ensure_coverage(inputs: Sequence[EventInput], result: DistillResult) -> tuple[DistillResult, int]:
    """Check provenance: cite only this chunk's events, and every one of them at least once.

    Citing a foreign event is an engine error (nothing is written). An uncovered event gets an
    offline memory of its own, so no event is ever dropped; returns the result and that count.
    """
    ids = {e.id for e in inputs}
    cited = {i for m in result.memories for i in m.event_ids}
    foreign = (cited | {i for k in result.knowledge for i in k.source_event_ids}) - ids
    if foreign or any(not m.event_ids for m in result.memories):
        raise DistillError(f"engine cited {len(foreign)} event(s) outside the chunk or a memory without events")
    if any(i >= len(result.memories) for k in result.knowledge for i in k.source_memory_indices):
        raise DistillError("engine cited an unknown memory index")
    missing = [e for e in inputs if e.id not in cited]
    if not missing:
        return result, 0
    extra = tuple(memory_from_group(g, {"engine": "offline", "fallback": "uncovered"}) for g in group_events(missing))
    return replace(result, memories=result.memories + extra), len(missing)


async def embed_result(
    embedder: Embedder, result: DistillResult, inputs: Sequence[EventInput] = ()
) -> tuple[list[list[float]], list[list[float]], list[bytes | None]]:
    """Vectors for memory summaries (without filler, as packs render them) and knowledge contents,
    and each memory's fact-bearing turns as one compact blob (:mod:`elephantasm.domain.turn_vectors`),
    all in one embedder call."""
    by_id = {e.id: e for e in inputs}
    turns = [fact_turns(by_id, m.event_ids, m.content) for m in result.memories]
    texts = [lean_text(m.summary) for m in result.memories] + [k.content for k in result.knowledge]
    texts += [t for ts in turns for t, _ in ts]
    vectors = await embedder.embed(texts) if texts else []
    n_mem, n_know = len(result.memories), len(result.knowledge)
    blobs = encode_turns(vectors[n_mem + n_know :], turns, embedder.space.dim)
    return vectors[:n_mem], vectors[n_mem : n_mem + n_know], blobs


def _memory_rows(
    ctx: WriteContext, result: DistillResult, vectors: Sequence[Sequence[float]], turns: Sequence[bytes | None]
) -> list[dict]:
    return [
        {
            "id": uuid7(),
            "org_id": ctx.org_id,
            "anima_id": ctx.anima_id,
            "summary": draft.summary,
            "content": draft.content,
            "importance": draft.importance,
            "confidence": draft.confidence,
            "state": "active",
            "session_id": draft.session_id,
            "time_start": draft.time_start,
            "time_end": draft.time_end,
            # The run that wrote it is the journal's "created" entry (dream_actions), not a copy here.
            "meta": dict(draft.meta),
            "embedding": list(vector),
            "embedding_space": ctx.space,
            "turn_vectors": blob,
            "event_ids": sorted(set(draft.event_ids)),
            "created_at": ctx.now,
            "updated_at": ctx.now,
        }
        for draft, vector, blob in zip(result.memories, vectors, turns, strict=True)
    ]


async def _insert_memories(
    session: AsyncSession,
    ctx: WriteContext,
    result: DistillResult,
    vectors: Sequence[Sequence[float]],
    turns: Sequence[bytes | None],
    actions: list[dict],
) -> list[uuid.UUID]:
    rows = _memory_rows(ctx, result, vectors, turns)
    if not rows:
        return []
    await insert_rows(session, _MEMORIES, rows)
    for row, draft in zip(rows, result.memories, strict=True):
        # No copy of the text: the entry's target is the memory itself.
        after = {"events": len(set(draft.event_ids)), "importance": draft.importance}
        actions.append(ctx.action("created", "memory", row["id"], None, after))
    return [row["id"] for row in rows]


async def write_in(
    step: JournaledWrite,
    deps: DreamDeps,
    inputs: Sequence[EventInput],
    result: DistillResult,
    vectors: tuple[list[list[float]], list[list[float]], list[bytes | None]],
    chunk: Chunk,
) -> list[uuid.UUID]:
    """Write one chunk inside an open journaled step; returns the new memory ids.

    ``chunk.claim_id``: claimed by an earlier transaction of this run; None: read by this one.
    """
    session, ctx, actions = step.session, step.ctx, step.actions
    memory_ids = await _insert_memories(session, ctx, result, vectors[0], vectors[2], actions)
    if memory_ids:
        await size_switches.index_vectors_if_large(session, ctx.org_id, ctx.anima_id)
    event_times = {e.id: e.occurred_at for e in inputs}
    outcome = await write_knowledge(
        session,
        ctx,
        result.knowledge,
        memory_ids,
        vectors[1],
        event_times,
        deps.limits.knowledge_dedupe_similarity,
        actions,
    )
    if result.identity is not None:
        await apply_identity_draft(session, ctx, result.identity, actions)
    if not await mark_distilled(session, ctx.org_id, ctx.anima_id, ctx.run_id, chunk, ctx.now):
        # the claim was released, or another run moved the watermark meanwhile
        raise RunLostError(f"run {ctx.run_id} lost its chunk (seqs {chunk.first_seq}..{chunk.last_seq})")
    step.changes_packs = True  # distilled events leave the session layer's recent turns
    after = step.stats
    after.events_read += len(inputs)
    after.memories_created += len(memory_ids)
    after.knowledge_created += outcome.created
    after.counts.update(outcome.counts())
    after.counts["chunks"] += 1
    after.counts["identity_versions"] += int(result.identity is not None)
    return memory_ids
