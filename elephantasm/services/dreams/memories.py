"""Memories: read (with provenance), search, edit and delete, always scoped to the caller's org.

Edits bump the anima's ``state_version`` in the same transaction (they change packs).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import func, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from elephantasm.db.models import Event, Memory, MemoryRecall
from elephantasm.db.scopes import of_anima, visible
from elephantasm.db.tables import table_of
from elephantasm.domain.errors import NotFoundError
from elephantasm.services.animas import bump_state_version
from elephantasm.services.dreams.queries import nearest, newest_first, readable_columns

_M = table_of(Memory)
# Each memory's source events (its ``event_ids``) in the order they happened.
_PROVENANCE = text("""
SELECT m.id, e.id FROM memories m JOIN animas a ON a.id = m.anima_id
CROSS JOIN LATERAL unnest(m.event_ids) AS x(id) JOIN events e ON e.id = x.id AND e.anima_key = a.key
WHERE m.id = ANY(:ids) AND m.org_id = :org
ORDER BY m.id, e.occurred_at, e.id
""")
_R = table_of(MemoryRecall)
# A memory as read: its columns and its recall state (no row: never recalled).
_COLS = [
    *readable_columns(_M),
    func.coalesce(_R.c.recall_count, 0).label("recall_count"),
    _R.c.last_recalled_at.label("last_recalled_at"),
]
_FROM = _M.outerjoin(_R, _R.c.memory_id == _M.c.id)
_PAGE_AT = func.coalesce(_M.c.time_end, _M.c.created_at)


async def list_memories(
    session: AsyncSession,
    org_id: uuid.UUID,
    anima_id: uuid.UUID | None,
    state: str | None,
    limit: int,
    cursor: str | None,
) -> tuple[list[Any], str | None]:
    """Memories, most recent experience first, optionally of one anima and state."""
    stmt = select(*_COLS, _PAGE_AT.label("page_at")).select_from(_FROM).where(*visible(_M, org_id))
    if state is not None:
        stmt = stmt.where(_M.c.state == state)
    return await newest_first(session, org_id, anima_id, stmt, _M, _PAGE_AT, limit, cursor)


async def get_memory(session: AsyncSession, org_id: uuid.UUID, memory_id: uuid.UUID) -> Any:
    """One live memory of the org, or NotFoundError."""
    stmt = select(*_COLS).select_from(_FROM).where(_M.c.id == memory_id, *visible(_M, org_id))
    row = (await session.execute(stmt)).one_or_none()
    if row is None:
        raise NotFoundError(f"memory {memory_id} not found")
    return row


async def provenance(
    session: AsyncSession, org_id: uuid.UUID, memory_ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, list[uuid.UUID]]:
    """Each memory's source event ids, in the order the events happened (none for another org's)."""
    if not memory_ids:
        return {}
    out: dict[uuid.UUID, list[uuid.UUID]] = {m: [] for m in memory_ids}
    for memory_id, event_id in (await session.execute(_PROVENANCE, {"ids": list(memory_ids), "org": org_id})).all():
        out[memory_id].append(event_id)
    return out


async def memory_events(session: AsyncSession, org_id: uuid.UUID, memory_id: uuid.UUID) -> list[Event]:
    """The events a memory was distilled from (after merges: the union), in time order."""
    row = await get_memory(session, org_id, memory_id)
    stmt = (
        select(Event)
        .where(col(Event.id).in_(list(row.event_ids)), *of_anima(Event, row.anima_id, org_id=org_id))
        .order_by(col(Event.occurred_at), col(Event.id))
    )
    return list((await session.execute(stmt)).scalars())


async def update_memory(
    session: AsyncSession,
    org_id: uuid.UUID,
    memory_id: uuid.UUID,
    changes: dict[str, Any],
    embedding: Sequence[float] | None,
    now: datetime,
    space: int | None = None,
) -> Any:
    """Apply the given fields (a new summary comes with its new embedding, made in ``space``);
    bumps ``state_version``."""
    current = await get_memory(session, org_id, memory_id)
    if not changes:
        return current
    values = dict(changes)
    if "meta" in values and values["meta"] is None:
        values["meta"] = {}
    if embedding is not None:
        values["embedding"] = list(embedding)
        values["embedding_space"] = space
    if "content" in values:
        values["turn_vectors"] = None  # their turn lines are the old content's
    if "state" in values and values["state"] != current.state:
        meta = dict(values.get("meta", current.meta) or {})
        meta["state_since"] = now.isoformat()
        values["meta"] = meta
    await session.execute(update(_M).where(_M.c.id == memory_id).values(updated_at=now, **values))
    await bump_state_version(session, [current.anima_id])
    return await get_memory(session, org_id, memory_id)


async def search_memories(
    session: AsyncSession,
    org_id: uuid.UUID,
    anima_id: uuid.UUID,
    vector: Sequence[float],
    limit: int,
    include_archived: bool = False,
    min_similarity: float | None = None,
    space: int | None = None,
) -> list[tuple[Any, float]]:
    """Nearest memories of one anima by cosine similarity of their summary embeddings, best first."""
    live = () if include_archived else (_M.c.state != "archived",)
    return await nearest(
        session, org_id, anima_id, _M, _COLS, vector, limit, min_similarity, space, *live, source=_FROM
    )
