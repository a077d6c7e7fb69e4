"""Anima use cases, always scoped to the caller's org (statements: ``db/queries/animas.py``)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import TYPE_CHECKING, Any

from elephantasm.db.models import Anima
from elephantasm.db.queries import animas as q
from elephantasm.db.queries.animas import bump_state_version as bump_state_version
from elephantasm.db.queries.animas import list_animas as list_animas
from elephantasm.db.queries.animas import org_of_anima as org_of_anima
from elephantasm.db.tables import inserted
from elephantasm.domain.errors import NotFoundError
from elephantasm.schemas.animas import AnimaCreate, AnimaUpdate

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession


async def create_anima(session: AsyncSession, org_id: uuid.UUID, data: AnimaCreate) -> Anima:
    """Create an anima in ``org_id``."""
    row = Anima(org_id=org_id, name=data.name, description=data.description, meta=data.meta or {}, user_id=data.user_id)
    return await inserted(session, row)


async def get_anima(session: AsyncSession, org_id: uuid.UUID, anima_id: uuid.UUID) -> Anima:
    """The live anima, or NotFoundError (also when it belongs to another org)."""
    anima: Anima = (await live_anima_values(session, org_id, anima_id, Anima))[0]
    return anima


async def live_anima_values(session: AsyncSession, org_id: uuid.UUID, anima_id: uuid.UUID, *what: Any) -> Any:
    """The row of ``what`` (entities or columns) of the org's live anima ``anima_id``, or
    NotFoundError (also when it belongs to another org: a 404, never an empty answer)."""
    found = await q.live_values(session, org_id, anima_id, *what)
    if found is None:
        raise NotFoundError(f"anima {anima_id} not found")
    return found


async def update_anima(session: AsyncSession, org_id: uuid.UUID, anima_id: uuid.UUID, data: AnimaUpdate) -> Anima:
    """Apply the given fields; a change can alter the pack (its name is in it), so bump the version."""
    anima = await get_anima(session, org_id, anima_id)
    changes = data.model_dump(exclude_unset=True)
    if not changes:
        return anima
    if "meta" in changes and changes["meta"] is None:
        changes["meta"] = {}
    return await q.save_changes(session, anima, changes)


async def delete_anima(session: AsyncSession, org_id: uuid.UUID, anima_id: uuid.UUID, now: datetime) -> None:
    """Soft-delete: the anima disappears from every route; its data stays for recovery/purge."""
    if not await q.soft_delete(session, org_id, anima_id, now):
        raise NotFoundError(f"anima {anima_id} not found")
