"""Recorded generations and their replay.

Every local-model generation records seed, sampling settings, model digest, pack fingerprint, the
exact prompt (prefix and suffix text) and its token hash, and the output (``chat.record_chat``).
Replay re-runs it from that record, with KV reuse or as a full prefill, and says whether the
output is byte-identical.
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
from elephantasm.schemas.local import ReplayRead
from elephantasm.services.kv import snapshots
from elephantasm.services.kv.reuse import Prompt, prime

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from elephantasm.db.engine import SessionFactory
    from elephantasm.local.engine import Generated
    from elephantasm.local.holder import LocalModels


async def get_generation(session: AsyncSession, org_id: uuid.UUID, generation_id: uuid.UUID) -> GenerationRow:
    """A generation of the org (404 for another org's or a deleted anima's)."""
    stmt = (
        select(GenerationRow)
        .join(Anima, col(Anima.id) == col(GenerationRow.anima_id))
        .where(
            col(GenerationRow.id) == generation_id, col(GenerationRow.org_id) == org_id, col(Anima.deleted_at).is_(None)
        )
    )
    row = (await session.execute(stmt)).scalars().first()
    if row is None:
        raise NotFoundError(f"generation {generation_id} not found")
    return row


async def replay(
    read_session: SessionFactory, models: LocalModels, org_id: uuid.UUID, generation_id: uuid.UUID, reuse: bool = True
) -> ReplayRead:
    """Re-run a recorded generation (same prompt, seed and settings) and compare the output bytes;
    ``reuse=False``: from an empty cache, a full prefill (what reuse must be identical to)."""
    async with read_session() as session:
        row = await get_generation(session, org_id, generation_id)
    if row.prompt.get("forgotten"):
        raise ConflictError(f"generation {generation_id} cannot be replayed: its prompt held forgotten memory")
    engine = await models.aengine()
    if engine.model_digest != row.model_digest:
        raise ConflictError(
            f"generation {generation_id} was made with model {row.model_digest[:12]}…; "
            f"this server runs {engine.model_digest[:12]}…"
        )
    prefix = await asyncio.to_thread(snapshots.make_prefix, engine, row.prompt["prefix"])
    suffix = engine.tokenize_suffix(row.prompt["suffix"])
    prompt = Prompt(prefix.tokens + suffix, len(prefix.tokens))
    planned = await snapshots.find_for(read_session, models, engine, org_id, prompt) if reuse else None

    sampling = Sampling(**row.sampling)
    if row.finish_reason == "cancelled":
        # The client stopped it early: replay the tokens it got, not the ones it never asked to see.
        sampling = dataclasses.replace(sampling, max_tokens=row.output_tokens)

    def work() -> tuple[str, Generated]:
        with engine.lock:
            primed = prime(engine, org_id, prompt, planned, keep=None, reuse=reuse)
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
