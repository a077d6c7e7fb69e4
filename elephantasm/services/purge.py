"""Hard purge of an anima for erasure requests (soft deletion keeps the data for recovery).

Every table of anima data cascades from ``animas``, so deleting the anima row removes all of it in
one statement; stores outside these tables erase their share through the caller's ``hooks`` first,
in the caller's transaction.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from elephantasm.db.queries import animas as q
from elephantasm.domain.errors import NotFoundError
from elephantasm.services.dreams.claims import lock_anima

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

log = logging.getLogger(__name__)

AnimaPurgeHook = Callable[["AsyncSession", uuid.UUID, uuid.UUID], Awaitable[None]]
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
    owner = await q.lock_row(session, anima_id, org_id)
    if owner is None:
        raise NotFoundError(f"anima {anima_id} not found")
    counts = await q.row_counts(session, anima_id)
    for hook in hooks:
        await hook(session, owner, anima_id)
    await q.delete_row(session, anima_id)
    log.info("purged anima %s of org %s", anima_id, owner)
    return Purged(owner, anima_id, *counts)
