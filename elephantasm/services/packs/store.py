"""Served packs (``memory_packs``, bounded per anima) and the shared snapshot tier's writes.

A compiled pack is recorded once, with its snapshot, in one statement and one short transaction.
Both are derived data (a lost one is recompiled identically), so the commit does not wait for
the WAL flush (``synchronous_commit = off``): a crash can lose only the last few, never corrupt.
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import TYPE_CHECKING

from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from elephantasm.db.driver_fetch import fetch
from elephantasm.db.keyset import Direction, keyset_page
from elephantasm.db.models import MemoryPackRow
from elephantasm.db.scopes import org_scoped
from elephantasm.domain.errors import NotFoundError
from elephantasm.schemas.packs import MemoryPackRead
from elephantasm.services.animas import get_anima
from elephantasm.services.packs.cache import CachedPack

if TYPE_CHECKING:
    from elephantasm.services.packs.compiler import CompiledPack
    from elephantasm.services.packs.deps import PackDeps

# One round trip, its own transaction: record the pack, trim the anima's history to ``keep`` (the
# new row is not visible to the trim's subquery, hence ``keep - 1`` older ones), store the snapshot,
# and drop the anima's snapshots that can never be asked for again (older state) or are long past.
# ``set_config(…, true)`` lasts until the end of the statement's own (implicit) transaction, whose
# commit then does not wait for the WAL flush: one round trip where BEGIN, SET, the statement and
# COMMIT through SQLAlchemy took four. The pack's JSON is sent once: the snapshot's payload
# (``CachedPack.payload``) is built here around the same text, not escaped into a second copy;
# the history row keeps it as text (parsing 110 kB into jsonb cost Postgres ~1.1 ms a compile).
# A pack compiled from a state older than the anima's latest deletion (``forgotten_version``) may
# hold what was deleted: it was served to its requester but is recorded nowhere (services/forget.py).
# The key-share lock waits for a deletion in progress (it locks the anima row FOR UPDATE), then rechecks.
_PERSIST = text("""
WITH allowed AS (
    SELECT 1 FROM animas, (SELECT set_config('synchronous_commit', 'off', true)) AS async_commit
    WHERE id = :anima AND forgotten_version <= :sv FOR KEY SHARE OF animas
), new_pack AS (
    INSERT INTO memory_packs (id, org_id, anima_id, query, preset_name, session_memory_count, knowledge_count,
        long_term_memory_count, has_identity, token_count, max_tokens, encoding, fingerprint, state_version,
        content, compiled_at, created_at)
    SELECT :id, :org, :anima, :query, :preset, :n_session, :n_knowledge, :n_long, :has_identity, :tokens,
        :max_tokens, :encoding, :fingerprint, :sv, CAST(:content AS text), :compiled_at, now() FROM allowed
    ON CONFLICT (id) DO NOTHING RETURNING id
), trimmed AS (
    DELETE FROM memory_packs WHERE id IN (
        SELECT id FROM memory_packs WHERE org_id = :org AND anima_id = :anima
        ORDER BY created_at DESC, id DESC OFFSET :keep_older) AND EXISTS (SELECT 1 FROM new_pack)
), snapshot AS (
    INSERT INTO pack_snapshots (cache_key, org_id, anima_id, state_version, payload, created_at)
    SELECT :key, :org, :anima, :sv, jsonb_build_object('body', CAST(:content AS text), 'fingerprint',
        CAST(:fingerprint AS text), 'pack_id', CAST(:id AS text), 'memory_ids', CAST(:memory_ids AS text[])), now()
    FROM allowed
    ON CONFLICT (cache_key) DO NOTHING
), pruned AS (
    DELETE FROM pack_snapshots WHERE anima_id = :anima AND (state_version < :sv OR created_at < :stale_before)
)
SELECT count(*) FROM new_pack
""")


async def persist(deps: PackDeps, org_id: uuid.UUID, compiled: CompiledPack, entry: CachedPack) -> None:
    """Record a freshly compiled pack and its shared snapshot."""
    p = compiled.data  # MemoryPackRead's fields, as plain data
    keep = max(1, deps.pack_retention_per_anima)
    stale_before = deps.clock() - timedelta(seconds=2 * deps.as_of_bucket_seconds)
    params = {
        "id": p["id"],
        "org": org_id,
        "anima": p["anima_id"],
        "query": p["query"],
        "preset": p["preset_name"],
        "n_session": p["session_memory_count"],
        "n_knowledge": p["knowledge_count"],
        "n_long": p["long_term_memory_count"],
        "has_identity": p["has_identity"],
        "tokens": p["token_count"],
        "max_tokens": p["max_tokens"],
        "encoding": p["encoding"],
        "fingerprint": p["fingerprint"],
        "sv": p["state_version"],
        "content": entry.body.decode(),
        "compiled_at": p["compiled_at"],
        "keep_older": keep - 1,
        "key": entry.key,
        "memory_ids": [str(m) for m in entry.memory_ids],
        "stale_before": stale_before,
    }
    async with deps.engine.connect() as conn:  # no transaction of SQLAlchemy's: the statement is its own
        await fetch(conn, _PERSIST, params)


def _read(row: MemoryPackRow) -> MemoryPackRead:
    return MemoryPackRead.model_validate_json(row.content)


async def list_packs(
    session: AsyncSession, org_id: uuid.UUID, anima_id: uuid.UUID, limit: int, cursor: str | None
) -> tuple[list[MemoryPackRead], str | None]:
    """The anima's recently compiled packs, newest first (404 for another org's anima)."""
    await get_anima(session, org_id, anima_id)
    stmt = select(MemoryPackRow).where(org_scoped(MemoryPackRow, org_id), col(MemoryPackRow.anima_id) == anima_id)
    rows, next_cursor = await keyset_page(
        session,
        stmt,
        at=MemoryPackRow.created_at,
        row_id=MemoryPackRow.id,
        limit=limit,
        cursor=cursor,
        direction=Direction.DESC,
        entities=True,
    )
    return [_read(r) for r in rows], next_cursor


async def get_pack(session: AsyncSession, org_id: uuid.UUID, pack_id: uuid.UUID) -> MemoryPackRead:
    """One recorded pack of the org (404 otherwise, also when its anima was deleted)."""
    row = (
        await session.execute(
            select(MemoryPackRow).where(col(MemoryPackRow.id) == pack_id, org_scoped(MemoryPackRow, org_id))
        )
    ).scalar_one_or_none()
    try:
        if row is None:
            raise NotFoundError("missing")
        await get_anima(session, org_id, row.anima_id)
    except NotFoundError:
        raise NotFoundError(f"memory pack {pack_id} not found") from None
    return _read(row)
