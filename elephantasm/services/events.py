"""Extract: record events idempotently, and read them back, always scoped to the caller's org."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select, tuple_, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from elephantasm.db.keyset import Direction, keyset_page
from elephantasm.db.models import Anima, Event
from elephantasm.db.scopes import live_anima_row, org_scoped
from elephantasm.domain.errors import NotFoundError, PayloadTooLargeError, ValidationError
from elephantasm.domain.inputs import occurred_at_problem
from elephantasm.schemas.common import check_json_fields
from elephantasm.schemas.events import EventCreate
from elephantasm.settings import Settings

_EVENTS = Event.__table__


@dataclass(frozen=True)
class StoredEvent:
    """An event after extract, and whether this call created it (False = dedupe hit)."""

    event: Event
    created: bool


def event_size(data: EventCreate) -> int:
    """Bytes an event occupies on the wire-relevant fields (content, summary, meta)."""
    size = len(data.content.encode("utf-8"))
    if data.summary:
        size += len(data.summary.encode("utf-8"))
    if data.meta:
        size += len(json.dumps(data.meta, separators=(",", ":")).encode("utf-8"))
    return size


def check_sizes(events: list[EventCreate], max_bytes: int) -> None:
    """Reject the whole request if any event is over the limit (nothing is written)."""
    for position, data in enumerate(events):
        size = event_size(data)
        if size > max_bytes:
            where = f"events[{position}]" if len(events) > 1 else "event"
            raise PayloadTooLargeError(
                f"{where} is {size} bytes (content + summary + meta); the limit is {max_bytes} bytes"
            )


def check_events(events: list[EventCreate], settings: Settings, now: datetime) -> None:
    """Every check that needs the settings or the clock, before anything is written: sizes (413),
    JSON depth/size of ``meta`` and the ``occurred_at`` window, 1900 to now + 1 day (422)."""
    for position, data in enumerate(events):
        where = f"events[{position}]" if len(events) > 1 else ""
        check_json_fields(data, settings.max_json_depth, settings.max_json_bytes, where)
        problem = occurred_at_problem(data.occurred_at, now) if data.occurred_at else None
        if problem:
            raise ValidationError(f"{where + '.' if where else ''}occurred_at: {problem}")
    check_sizes(events, settings.max_event_bytes)  # after the depth check: sizing encodes meta


async def _check_animas(session: AsyncSession, org_id: uuid.UUID, anima_ids: set[uuid.UUID]) -> None:
    found = set(
        (
            await session.execute(
                select(Anima.id).where(Anima.id.in_(anima_ids), org_scoped(Anima, org_id), live_anima_row())
            )
        ).scalars()
    )
    missing = sorted(str(a) for a in anima_ids - found)
    if missing:
        raise NotFoundError(f"anima {missing[0]} not found")


def event_row(org_id: uuid.UUID, data: EventCreate, now: datetime) -> dict:
    """The column values of a new event row (a fresh id; ``occurred_at`` defaults to ``now``)."""
    return {
        "id": uuid.uuid4(),
        "org_id": org_id,
        "anima_id": data.anima_id,
        "event_type": data.event_type,
        "role": data.role,
        "author": data.author,
        "summary": data.summary,
        "content": data.content,
        "occurred_at": data.occurred_at or now,
        "session_id": data.session_id,
        "meta": data.meta,
        "source_uri": data.source_uri,
        "dedupe_key": data.dedupe_key,
        "importance_score": data.importance_score,
        "created_at": now,
        "updated_at": now,
    }


async def record_events(
    session: AsyncSession, org_id: uuid.UUID, events: list[EventCreate], now: datetime
) -> list[StoredEvent]:
    """Insert events (one transaction, the caller commits) and return them in request order.

    An event whose ``dedupe_key`` already exists for its anima is not inserted again: the stored
    one is returned with ``created=False``. Concurrency-safe through the unique index
    (``ON CONFLICT DO NOTHING``), so N identical concurrent requests leave exactly one row.
    Animas that received new events get their ``state_version`` bumped in the same transaction.
    """
    await _check_animas(session, org_id, {e.anima_id for e in events})
    rows = [event_row(org_id, e, now) for e in events]
    inserted_ids: set[uuid.UUID] = set()
    # Chunked so one statement stays well under Postgres's 32k bind-parameter limit.
    for start in range(0, len(rows), 500):
        stmt = insert(_EVENTS).on_conflict_do_nothing(index_elements=["anima_id", "dedupe_key"]).returning(_EVENTS.c.id)
        result = await session.execute(stmt, rows[start : start + 500])
        inserted_ids.update(result.scalars().all())
    created_rows = [r for r in rows if r["id"] in inserted_ids]
    by_key = await _existing_by_dedupe(session, [r for r in rows if r["id"] not in inserted_ids])
    by_id = await _load(session, inserted_ids)
    stored = []
    for r in rows:
        if r["id"] in inserted_ids:
            stored.append(StoredEvent(by_id[r["id"]], True))
        else:
            stored.append(StoredEvent(by_key[(r["anima_id"], r["dedupe_key"])], False))
    await _touch_animas(session, created_rows)
    return stored


async def _load(session: AsyncSession, ids: set[uuid.UUID]) -> dict[uuid.UUID, Event]:
    if not ids:
        return {}
    rows = (await session.execute(select(Event).where(Event.id.in_(ids)))).scalars()
    return {e.id: e for e in rows}


async def _existing_by_dedupe(session: AsyncSession, rows: list[dict]) -> dict[tuple, Event]:
    keys = {(r["anima_id"], r["dedupe_key"]) for r in rows}
    if not keys:
        return {}
    stmt = select(Event).where(tuple_(Event.anima_id, Event.dedupe_key).in_(list(keys)))
    return {(e.anima_id, e.dedupe_key): e for e in (await session.execute(stmt)).scalars()}


async def _touch_animas(session: AsyncSession, created_rows: list[dict]) -> None:
    latest: dict[uuid.UUID, datetime] = {}
    for r in created_rows:
        at = r["occurred_at"]
        if r["anima_id"] not in latest or at > latest[r["anima_id"]]:
            latest[r["anima_id"]] = at
    for anima_id, at in sorted(latest.items()):  # sorted: a fixed lock order avoids deadlocks
        await session.execute(
            update(Anima)
            .where(Anima.id == anima_id)
            .values(
                state_version=Anima.state_version + 1,
                last_event_at=func.greatest(func.coalesce(Anima.last_event_at, at), at),
            )
        )


async def get_event(session: AsyncSession, org_id: uuid.UUID, event_id: uuid.UUID) -> Event:
    """One event of the org, or NotFoundError."""
    event = (
        await session.execute(
            select(Event)
            .join(Anima, Anima.id == Event.anima_id)
            .where(Event.id == event_id, org_scoped(Event, org_id), live_anima_row())
        )
    ).scalar_one_or_none()
    if event is None:
        raise NotFoundError(f"event {event_id} not found")
    return event


@dataclass(frozen=True)
class EventFilter:
    """Filters of ``GET /api/events``."""

    anima_id: uuid.UUID | None = None
    session_id: str | None = None
    event_type: str | None = None
    since: datetime | None = None
    until: datetime | None = None


async def list_events(
    session: AsyncSession, org_id: uuid.UUID, flt: EventFilter, limit: int, cursor: str | None
) -> tuple[list[Event], str | None]:
    """Events in chronological order (occurred_at, id), keyset-paginated."""
    stmt = select(Event).join(Anima, Anima.id == Event.anima_id).where(org_scoped(Event, org_id), live_anima_row())
    if flt.anima_id:
        await _check_animas(session, org_id, {flt.anima_id})  # another org's anima is a 404, not []
        stmt = stmt.where(Event.anima_id == flt.anima_id)
    if flt.session_id:
        stmt = stmt.where(Event.session_id == flt.session_id)
    if flt.event_type:
        stmt = stmt.where(Event.event_type == flt.event_type)
    if flt.since:
        stmt = stmt.where(Event.occurred_at >= flt.since)
    if flt.until:
        stmt = stmt.where(Event.occurred_at < flt.until)
    return await keyset_page(session, stmt, at=Event.occurred_at, row_id=Event.id, limit=limit, cursor=cursor,
                             direction=Direction.ASC, at_name="occurred_at", entities=True)
