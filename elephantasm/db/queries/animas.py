"""Animas: the statements behind ``services/animas.py``, and the anima-row locks and version marks
that forgetting and the pack writers rely on."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from elephantasm.db.keyset import Direction, keyset_page
from elephantasm.db.models import Anima, Event, Knowledge, Memory
from elephantasm.db.scopes import live_anima_row, of_anima, org_scoped
from elephantasm.db.tables import rowcount


async def live_values(session: AsyncSession, org_id: uuid.UUID, anima_id: uuid.UUID, *what: Any) -> Row[Any] | None:
    """The row of ``what`` (entities or columns) of the org's live anima ``anima_id``, or None."""
    stmt = select(*what).where(col(Anima.id) == anima_id, org_scoped(Anima, org_id), live_anima_row())
    return (await session.execute(stmt)).one_or_none()


async def org_of_anima(session: AsyncSession, anima_id: uuid.UUID) -> uuid.UUID | None:
    """The org of a live anima, whichever it is (for operator tools such as the CLI), or None."""
    stmt = select(col(Anima.org_id)).where(col(Anima.id) == anima_id, live_anima_row())
    return (await session.execute(stmt)).scalar_one_or_none()


async def list_animas(
    session: AsyncSession, org_id: uuid.UUID, limit: int, cursor: str | None
) -> tuple[list[Anima], str | None]:
    """Live animas of the org, oldest first, keyset-paginated."""
    return await keyset_page(
        session,
        select(Anima).where(org_scoped(Anima, org_id), live_anima_row()),
        at=Anima.created_at,
        row_id=Anima.id,
        limit=limit,
        cursor=cursor,
        direction=Direction.ASC,
        entities=True,
    )


async def save_changes(session: AsyncSession, anima: Anima, changes: dict[str, Any]) -> Anima:
    """Write ``changes`` to ``anima``, bumping its ``state_version``; returns it as stored."""
    for field, value in changes.items():
        setattr(anima, field, value)
    anima.state_version = Anima.state_version + 1
    anima.updated_at = func.now()  # type: ignore[assignment]  # SQL expression, evaluated by the UPDATE; SQLModel types the field as datetime
    await session.flush()
    await session.refresh(anima)
    return anima


async def soft_delete(session: AsyncSession, org_id: uuid.UUID, anima_id: uuid.UUID, now: datetime) -> bool:
    """Mark the org's live anima deleted at ``now``; False if there was none."""
    stmt = (
        update(Anima)
        .where(col(Anima.id) == anima_id, org_scoped(Anima, org_id), live_anima_row())
        .values(deleted_at=now, state_version=Anima.state_version + 1)
    )
    return rowcount(await session.execute(stmt)) > 0


async def bump_state_version(session: AsyncSession, anima_ids: list[uuid.UUID]) -> None:
    """Mark that these animas' packs may have changed; must run in the writing transaction."""
    if anima_ids:
        await session.execute(
            update(Anima).where(col(Anima.id).in_(anima_ids)).values(state_version=col(Anima.state_version) + 1)
        )


async def lock_row(session: AsyncSession, anima_id: uuid.UUID, org_id: uuid.UUID | None = None) -> uuid.UUID | None:
    """Lock the anima's row (live or not; of ``org_id`` when given) for update until the transaction
    ends, as pack recording waits on it; returns its org, or None if there is no such anima."""
    stmt = select(col(Anima.org_id)).where(col(Anima.id) == anima_id)
    if org_id is not None:
        stmt = stmt.where(org_scoped(Anima, org_id))
    return (await session.execute(stmt.with_for_update())).scalar_one_or_none()


async def row_counts(session: AsyncSession, anima_id: uuid.UUID) -> list[int]:
    """How many events, memories (deleted ones too) and knowledge items the anima holds."""
    counts = [select(func.count()).select_from(Event).where(*of_anima(Event, anima_id))]
    counts += [select(func.count()).where(col(m.anima_id) == anima_id) for m in (Memory, Knowledge)]
    return [int((await session.execute(stmt)).scalar_one()) for stmt in counts]


async def delete_row(session: AsyncSession, anima_id: uuid.UUID) -> None:
    """Delete the anima's row; its rows in every table go with it (``ON DELETE CASCADE``)."""
    await session.execute(delete(Anima).where(col(Anima.id) == anima_id))


async def mark_forgotten(session: AsyncSession, anima_id: uuid.UUID, *, bump: bool) -> None:
    """Set ``forgotten_version`` to the next state version; with ``bump``, move ``state_version``
    to it too (without, the caller's own update of the anima's rows bumps it, to exactly that)."""
    next_version = col(Anima.state_version) + 1
    values: dict[str, Any] = {"forgotten_version": next_version}
    if bump:
        values["state_version"] = next_version
    await session.execute(update(Anima).where(col(Anima.id) == anima_id).values(**values))
