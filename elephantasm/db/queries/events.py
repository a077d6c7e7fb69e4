"""Events: the reads behind ``services/events.py`` (writes go through ``services/event_copy.py``
and ``services/event_insert.py``, the ingest paths). An event reaches its org through its anima."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from elephantasm.db.keyset import Direction, keyset_page
from elephantasm.db.models import Anima, Event
from elephantasm.db.scopes import live_anima_row, of_anima, org_scoped
from elephantasm.db.size_switches import event_rows


async def event_of_org(session: AsyncSession, org_id: uuid.UUID, event_id: uuid.UUID) -> Event | None:
    """The event ``event_id`` if a live anima of the org holds it, else None."""
    stmt = (
        select(Event)
        .join(Anima, col(Anima.key) == col(Event.anima_key))
        .where(col(Event.id) == event_id, org_scoped(Anima, org_id), live_anima_row())
    )
    return (await session.execute(stmt)).scalar_one_or_none()


@dataclass(frozen=True)
class EventFilter:
    """Filters of ``GET /api/events``."""

    anima_id: uuid.UUID | None = None
    session_id: str | None = None
    event_type: str | None = None
    since: datetime | None = None
    until: datetime | None = None


async def list_events(
    session: AsyncSession,
    org_id: uuid.UUID,
    flt: EventFilter,
    limit: int,
    cursor: str | None,
    anima: tuple[int, bool] | None = None,
) -> tuple[list[Event], str | None]:
    """Events in chronological order (occurred_at, id), keyset-paginated; with ``flt.anima_id``,
    ``anima`` is that anima's (key, events_indexed), looked up by the caller."""
    # Joined by key (an event's only reference to its anima and org): the org-wide
    # listing reads each of the org's live animas' events from the anima_key indexes.
    stmt = (
        select(Event)
        .join(Anima, col(Anima.key) == col(Event.anima_key))
        .where(org_scoped(Anima, org_id), live_anima_row())
    )
    if flt.anima_id and anima is not None:
        key, indexed = anima
        # A large anima's pages come from the (partial) time or session index; else read by seq, sorted.
        stmt = stmt.where(*of_anima(Event, flt.anima_id, key), event_rows(Event, indexed))
    if flt.session_id:
        stmt = stmt.where(col(Event.session_id) == flt.session_id)
    if flt.event_type:
        stmt = stmt.where(col(Event.event_type) == flt.event_type)
    if flt.since:
        stmt = stmt.where(col(Event.occurred_at) >= flt.since)
    if flt.until:
        stmt = stmt.where(col(Event.occurred_at) < flt.until)
    return await keyset_page(
        session,
        stmt,
        at=Event.occurred_at,
        row_id=Event.id,
        limit=limit,
        cursor=cursor,
        direction=Direction.ASC,
        entities=True,
    )
