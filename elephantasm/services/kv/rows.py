"""kv_snapshots rows: lookup, insert, touch, listing, deletion and the byte budget (LRU).

Rows are the index; files in the snapshot store hold the bytes. A file is removed only when no
row of its org still names it (two animas of one org may render byte-identical prefixes).
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, delete, func, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from elephantasm.db.models import Anima, KVSnapshotRow
from elephantasm.db.tables import table_of
from elephantasm.domain.errors import NotFoundError
from elephantasm.local.store import SnapshotStore

_T = table_of(KVSnapshotRow)


def _of_org(org_id: uuid.UUID) -> Any:
    """Snapshot rows of the org's live animas."""
    return (
        select(KVSnapshotRow)
        .join(Anima, col(Anima.id) == col(KVSnapshotRow.anima_id))
        .where(col(KVSnapshotRow.org_id) == org_id, col(Anima.deleted_at).is_(None))
    )


async def find(session: AsyncSession, org_id: uuid.UUID, anima_id: uuid.UUID, key: str) -> KVSnapshotRow | None:
    """The anima's snapshot for ``key`` (only of a live anima of this org)."""
    stmt = _of_org(org_id).where(col(KVSnapshotRow.anima_id) == anima_id, col(KVSnapshotRow.snapshot_key) == key)
    return (await session.execute(stmt)).scalars().first()


async def get(session: AsyncSession, org_id: uuid.UUID, snapshot_id: uuid.UUID) -> KVSnapshotRow:
    """One snapshot of the org, or 404 (another org's id is a 404 too)."""
    row = (await session.execute(_of_org(org_id).where(col(KVSnapshotRow.id) == snapshot_id))).scalars().first()
    if row is None:
        raise NotFoundError(f"kv snapshot {snapshot_id} not found")
    return row


async def upsert(session: AsyncSession, values: dict[str, Any]) -> KVSnapshotRow:
    """Insert a snapshot row; a concurrent insert of the same (anima, key) replaces file and stats."""
    refresh = {c: values[c] for c in ("sha256", "bytes", "n_tokens", "token_ids_hash", "meta", "source")}
    stmt = (
        insert(_T)
        .values(**values)
        .on_conflict_do_update(constraint="uq_kv_snapshots_anima_key", set_={**refresh, "last_used_at": func.now()})
        .returning(_T.c.id)
    )
    row_id = (await session.execute(stmt)).scalar_one()
    return (await session.execute(select(KVSnapshotRow).where(KVSnapshotRow.id == row_id))).scalars().one()


async def candidates(
    session: AsyncSession, org_id: uuid.UUID, model_digest: str, kv_type: str, limit: int = 500
) -> list[Any]:
    """The org's snapshots for one model and KV type (of live animas), most recently used first:
    ``id, sha256, n_tokens, token_ids_hash, blocks`` (the prefix-block hashes kept in ``meta``)."""
    stmt = (
        select(_T.c.id, _T.c.sha256, _T.c.n_tokens, _T.c.token_ids_hash, _T.c.meta["blocks"].label("blocks"))
        .join(Anima, col(Anima.id) == _T.c.anima_id)
        .where(
            _T.c.org_id == org_id,
            _T.c.model_digest == model_digest,
            _T.c.kv_type == kv_type,
            col(Anima.deleted_at).is_(None),
        )
        .order_by(_T.c.last_used_at.desc(), _T.c.id)
        .limit(limit)
    )
    return list((await session.execute(stmt)).all())


def by_id(snapshot_id: uuid.UUID) -> Any:
    """A ``where`` clause for one snapshot row."""
    return _T.c.id == snapshot_id


async def touch(session: AsyncSession, snapshot_id: uuid.UUID, now: datetime) -> None:
    await session.execute(update(_T).where(_T.c.id == snapshot_id).values(last_used_at=now))


async def list_for(
    session: AsyncSession, org_id: uuid.UUID, anima_id: uuid.UUID | None = None, limit: int = 100
) -> list[KVSnapshotRow]:
    """Snapshots of the org (or one anima), most recently used first."""
    stmt = _of_org(org_id)
    if anima_id is not None:
        stmt = stmt.where(col(KVSnapshotRow.anima_id) == anima_id)
    stmt = stmt.order_by(col(KVSnapshotRow.last_used_at).desc(), col(KVSnapshotRow.id)).limit(limit)
    return list((await session.execute(stmt)).scalars())


async def unlink_orphans(session: AsyncSession, store: SnapshotStore, gone: list[tuple[uuid.UUID, str]]) -> None:
    """Delete the files of ``gone`` (org, sha256) that no row names any more."""
    for org_id, digest in set(gone):
        still = await session.execute(select(_T.c.id).where(_T.c.org_id == org_id, _T.c.sha256 == digest).limit(1))
        if still.first() is None:
            await asyncio.to_thread(store.delete, org_id, digest)


async def delete_rows(session: AsyncSession, store: SnapshotStore, where: Any) -> int:
    """Delete the rows matching ``where`` and every file no remaining row names; returns the count."""
    gone = [(r.org_id, r.sha256) for r in (await session.execute(delete(_T).where(where).returning(_T))).all()]
    await unlink_orphans(session, store, gone)
    return len(gone)


async def purge_anima(session: AsyncSession, store: SnapshotStore, org_id: uuid.UUID, anima_id: uuid.UUID) -> int:
    """Remove every snapshot of one anima (rows and files): they go when the anima does."""
    return await delete_rows(session, store, (_T.c.org_id == org_id) & (_T.c.anima_id == anima_id))


async def purge_deleted_animas(session: AsyncSession, store: SnapshotStore, org_id: uuid.UUID | None = None) -> int:
    """Remove the snapshots of soft-deleted animas (of one org, or all)."""
    dead = select(col(Anima.id)).where(col(Anima.deleted_at).is_not(None))
    where: ColumnElement[bool] = _T.c.anima_id.in_(dead)
    if org_id is not None:
        where = where & (_T.c.org_id == org_id)
    return await delete_rows(session, store, where)


async def evict(session: AsyncSession, store: SnapshotStore, budget_bytes: int) -> int:
    """Delete least-recently-used snapshots (of every org: the budget is the disk's) until the total
    is within ``budget_bytes``."""
    total = (await session.execute(select(func.coalesce(func.sum(_T.c.bytes), 0)))).scalar_one()
    if total <= budget_bytes:
        return 0
    victims: list[uuid.UUID] = []
    for row in (await session.execute(select(_T.c.id, _T.c.bytes).order_by(_T.c.last_used_at, _T.c.id))).all():
        if total <= budget_bytes:
            break
        victims.append(row.id)
        total -= row.bytes
    return await delete_rows(session, store, _T.c.id.in_(victims))
