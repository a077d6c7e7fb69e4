"""Recorded generations and their replay.

Every local-model generation records seed, sampling settings, model digest, pack fingerprint, the
exact prompt (prefix and suffix text) and its token hash, and the output. Replay re-runs it from
that record and says whether the output is byte-identical.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from typing import TYPE_CHECKING

from sqlalchemy import select
from sqlmodel import col

from elephantasm.db.models import Anima, GenerationRow
from elephantasm.domain.errors import ConflictError, NotFoundError
from elephantasm.domain.kv.snapshot import token_ids_hash
from elephantasm.local.sampling import Sampling
from elephantasm.schemas.events import EventCreate
from elephantasm.schemas.local import ReplayRead
from elephantasm.services.events import record_events
from elephantasm.services.kv import snapshots
from elephantasm.services.kv.reuse import Primed, Prompt, in_memory, prime

if TYPE_CHECKING:
    from elephantasm.local.engine import Generated, LocalEngine
    from elephantasm.runtime import Runtime
    from elephantasm.services.kv.chat import ChatPlan


def _turn_events(plan: ChatPlan, output: str) -> list[EventCreate]:
    stem = f"chat:{plan.conversation_key}"
    meta = {"source": "chat", "generation_id": str(plan.generation_id), "pack_fingerprint": plan.pack.fingerprint}
    user = EventCreate(
        anima_id=plan.anima_id,
        event_type="message.in",
        role="user",
        content=plan.user_text,
        session_id=plan.session_id,
        dedupe_key=f"{stem}:user",
        meta=meta,
    )
    events = [user]
    if output.strip():
        events.append(
            EventCreate(
                anima_id=plan.anima_id,
                event_type="message.out",
                role="assistant",
                content=output,
                session_id=plan.session_id,
                dedupe_key=f"{stem}:assistant",
                meta=meta,
            )
        )
    return events


def recorded_status(status: str) -> str:
    """The KV outcome as the generation row stores it (8 characters): a restore that did not reuse
    evaluated the whole prompt, which the row records as a miss (``prompt.kv`` keeps the detail)."""
    return "miss" if status == "recomputed" else status


async def record_chat(runtime: Runtime, engine: LocalEngine, plan: ChatPlan, primed: Primed, gen: Generated) -> None:
    """One transaction: the generation row and the turn's events (deduplicated on retries)."""
    tokens = plan.prefix.tokens + plan.suffix_tokens
    kv = {"outcome": primed.status, "restored": primed.restored, "prefilled": primed.prefilled}
    row = GenerationRow(
        id=plan.generation_id,
        org_id=plan.org_id,
        anima_id=plan.anima_id,
        model_digest=engine.model_digest,
        pack_fingerprint=plan.pack.fingerprint,
        kv_status=recorded_status(primed.status),
        seed=plan.sampling.seed,
        sampling=plan.sampling.as_dict(),
        prompt_hash=token_ids_hash(tokens),
        prompt_tokens=len(tokens),
        prompt={"prefix": plan.prefix.text, "suffix": plan.suffix_text, "session_id": plan.session_id, "kv": kv},
        output=gen.text,
        output_tokens=len(gen.tokens),
        finish_reason=gen.finish_reason,
    )
    async with runtime.unit_of_work() as session:
        session.add(row)
        await session.flush()
        await record_events(session, plan.org_id, _turn_events(plan, gen.text), runtime.clock())


async def get_generation(runtime: Runtime, org_id: uuid.UUID, generation_id: uuid.UUID) -> GenerationRow:
    """A generation of the org (404 for another org's or a deleted anima's)."""
    stmt = (
        select(GenerationRow)
        .join(Anima, col(Anima.id) == col(GenerationRow.anima_id))
        .where(
            col(GenerationRow.id) == generation_id, col(GenerationRow.org_id) == org_id, col(Anima.deleted_at).is_(None)
        )
    )
    async with runtime.read_session() as session:
        row = (await session.execute(stmt)).scalars().first()
    if row is None:
        raise NotFoundError(f"generation {generation_id} not found")
    return row


async def replay(runtime: Runtime, org_id: uuid.UUID, generation_id: uuid.UUID) -> ReplayRead:
    """Re-run a recorded generation (same prompt, seed and settings) and compare the output bytes."""
    row = await get_generation(runtime, org_id, generation_id)
    if row.prompt.get("forgotten"):
        raise ConflictError(f"generation {generation_id} cannot be replayed: its prompt held forgotten memory")
    engine = await runtime.local.aengine(runtime.settings)
    if engine.model_digest != row.model_digest:
        raise ConflictError(
            f"generation {generation_id} was made with model {row.model_digest[:12]}…; "
            f"this server runs {engine.model_digest[:12]}…"
        )
    prefix = await asyncio.to_thread(snapshots.make_prefix, engine, row.prompt["prefix"])
    suffix = engine.tokenize_suffix(row.prompt["suffix"])
    prompt = Prompt(prefix.tokens + suffix, len(prefix.tokens))
    held = in_memory(engine, org_id, prompt)
    planned = await snapshots.find(runtime, org_id, engine, prompt, held.claim if held else 0)

    sampling = Sampling(**row.sampling)
    if row.finish_reason == "cancelled":
        # The client stopped it early: replay the tokens it got, not the ones it never asked to see.
        sampling = dataclasses.replace(sampling, max_tokens=row.output_tokens)

    def work() -> tuple[str, Generated]:
        with engine.lock:
            primed = prime(engine, org_id, prompt, planned, keep=None)
            return primed.status, engine.generate(sampling)

    kv, gen = await asyncio.to_thread(work)
    return ReplayRead(
        generation_id=row.id,
        identical=gen.text.encode() == row.output.encode(),
        prompt_identical=token_ids_hash(prefix.tokens + suffix) == row.prompt_hash,
        kv=kv,
        output=gen.text,
        original_output=row.output,
    )
