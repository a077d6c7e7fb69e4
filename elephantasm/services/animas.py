"""Anima use cases, always scoped to the caller's org."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from elephantasm.db.keyset import Direction, keyset_page
from elephantasm.db.models import Anima
from elephantasm.db.scopes import live_anima_row, org_scoped
from elephantasm.db.tables import rowcount
from elephantasm.domain.errors import NotFoundError
from elephantasm.schemas.animas import AnimaCreate, AnimaUpdate


async def create_anima(session: AsyncSession, org_id: uuid.UUID, data: AnimaCreate) -> Anima:
    """Create an anima in ``org_id``."""
    anima = Anima(
        org_id=org_id, name=data.name, description=data.description, meta=data.meta or {}, user_id=data.user_id
    )
    session.add(anima)
    await session.flush()
    await session.refresh(anima)
    return anima


async def get_anima(session: AsyncSession, org_id: uuid.UUID, anima_id: uuid.UUID) -> Anima:
    """The live anima, or NotFoundError (also when it belongs to another org)."""
    anima: Anima = await live_anima_value(session, org_id, anima_id, Anima)
    return anima


async def live_anima_value(session: AsyncSession, org_id: uuid.UUID, anima_id: uuid.UUID, what: Any) -> Any:
    """``what`` (the entity or one of its columns) of the org's live anima ``anima_id``, or
    NotFoundError (also when it belongs to another org: a 404, never an empty answer)."""
    return (await live_anima_values(session, org_id, anima_id, what))[0]


async def live_anima_values(session: AsyncSession, org_id: uuid.UUID, anima_id: uuid.UUID, *what: Any) -> Any:
    """The row of ``what`` (entities or columns) of the org's live anima ``anima_id``, or
    NotFoundError as :func:`live_anima_value`."""
    found = (
        await session.execute(
            select(*what).where(col(Anima.id) == anima_id, org_scoped(Anima, org_id), live_anima_row())
        )
    ).one_or_none()
    if found is None:
        raise NotFoundError(f"anima {anima_id} not found")
    return found


async def org_of_anima(session: AsyncSession, anima_id: uuid.UUID) -> uuid.UUID | None:
    """The org of a live anima, whichever it is (for operator tools such as the CLI), or None."""
    stmt = select(col(Anima.org_id)).where(col(Anima.id) == anima_id, live_anima_row())
    return (await session.execute(stmt)).scalar_one_or_none()


async def list_animas(
    session: AsyncSession, org_id: uuid.UUID, limit: int, cursor: str | None
) -> tuple[list[Anima], str | None]:
    """Animas of the org, oldest first, keyset-paginated."""
    stmt = select(Anima).where(org_scoped(Anima, org_id), live_anima_row())
    return await keyset_page(
        session,
        stmt,
        at=Anima.created_at,
        row_id=Anima.id,
        limit=limit,
        cursor=cursor,
        direction=Direction.ASC,
        at_name="created_at",
        entities=True,
    )


async def update_anima(session: AsyncSession, org_id: uuid.UUID, anima_id: uuid.UUID, data: AnimaUpdate) -> Anima:
    """Apply the given fields; a change can alter the pack (its name is in it), so bump the version."""
    anima = await get_anima(session, org_id, anima_id)
    changes = data.model_dump(exclude_unset=True)
    if not changes:
        return anima
    for field, value in changes.items():
        setattr(anima, field, value if not (field == "meta" and value is None) else {})
    anima.state_version = Anima.state_version + 1
    anima.updated_at = func.now()  # type: ignore[assignment]  # SQL expression, evaluated by the UPDATE; SQLModel types the field as datetime
    await session.flush()
    await session.refresh(anima)
    return anima


async def delete_anima(session: AsyncSession, org_id: uuid.UUID, anima_id: uuid.UUID, now: datetime) -> None:
    """Soft-delete: the anima disappears from every route; its data stays for recovery/purge."""
    result = await session.execute(
        update(Anima)
        .where(col(Anima.id) == anima_id, col(Anima.org_id) == org_id, col(Anima.deleted_at).is_(None))
        .values(deleted_at=now, state_version=Anima.state_version + 1)
    )
    if rowcount(result) == 0:
        raise NotFoundError(f"anima {anima_id} not found")


async def bump_state_version(session: AsyncSession, anima_ids: list[uuid.UUID]) -> None:
    """Mark that these animas' packs may have changed; must run in the writing transaction."""
    if anima_ids:
        await session.execute(
            update(Anima).where(col(Anima.id).in_(anima_ids)).values(state_version=col(Anima.state_version) + 1)
        )
