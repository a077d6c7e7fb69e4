"""Hard purge of an anima: every row of it, in every table, for erasure requests.

Soft deletion (``DELETE /api/animas/{id}``) hides an anima and keeps its data for recovery; a
purge removes it for good. Every table that holds anima data references ``animas.id`` with
``ON DELETE CASCADE``, so deleting the anima row removes events, memories and their provenance,
knowledge and its history, identity versions, served packs, pack snapshots and the dream journal in
one statement. Stores outside these tables erase their share through the caller's ``hooks``
(``Runtime.anima_purge_hooks``) first, in the same transaction; the caller owns the transaction.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from elephantasm.db.models import Anima, Event, Knowledge, Memory
from elephantasm.db.scopes import of_anima
from elephantasm.domain.errors import NotFoundError
from elephantasm.services.dreams.claims import lock_anima

log = logging.getLogger(__name__)

AnimaPurgeHook = Callable[[AsyncSession, uuid.UUID, uuid.UUID], Awaitable[None]]
"""``hook(session, org_id, anima_id)``: erase what a store outside the core tables keeps of an anima.
A hook that raises aborts the purge (it can be retried), so hooks must be idempotent."""


@dataclass(frozen=True)
class Purged:
    """What a purge removed (counts of the main tables, for the CLI's report)."""

    org_id: uuid.UUID
    anima_id: uuid.UUID
    events: int
    memories: int
    knowledge: int


async def _count(session: AsyncSession, model: type, anima_id: uuid.UUID) -> int:
    # Events are indexed by the anima's key, not its id.
    where = of_anima(model, anima_id) if model is Event else [model.anima_id == anima_id]  # type: ignore[attr-defined]
    stmt = select(func.count()).select_from(model).where(*where)
    return int((await session.execute(stmt)).scalar_one())


async def purge_anima(
    session: AsyncSession, org_id: uuid.UUID | None, anima_id: uuid.UUID, hooks: Sequence[AnimaPurgeHook]
) -> Purged:
    """Remove the anima (live or soft-deleted) and all its rows, in the caller's transaction;
    ``org_id`` None = any org (CLI). After the commit the caller drops the anima's cached packs
    (``forget.drop_cached``). NotFoundError if there is no such anima (in that org).
    """
    # The lock order (claims.py): the anima's dreamer lock first, so a dream step in progress
    # ends before the row is locked; the run's next step then finds its run gone and stops.
    await lock_anima(session, anima_id)
    stmt = select(col(Anima.org_id)).where(col(Anima.id) == anima_id)
    if org_id is not None:
        stmt = stmt.where(col(Anima.org_id) == org_id)
    owner = (await session.execute(stmt.with_for_update())).scalar_one_or_none()
    if owner is None:
        raise NotFoundError(f"anima {anima_id} not found")
    counts = [await _count(session, m, anima_id) for m in (Event, Memory, Knowledge)]
    for hook in hooks:
        await hook(session, owner, anima_id)
    await session.execute(delete(Anima).where(col(Anima.id) == anima_id))
    log.info("purged anima %s of org %s", anima_id, owner)
    return Purged(owner, anima_id, *counts)
