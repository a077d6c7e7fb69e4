"""Extract: record events idempotently, and read them back, always scoped to the caller's org."""

from __future__ import annotations

import uuid
from datetime import datetime

import msgspec
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from elephantasm.db.models import Anima, Event
from elephantasm.db.queries import events as q
from elephantasm.domain.errors import NotFoundError, PayloadTooLargeError, ValidationError
from elephantasm.domain.inputs import json_problem, occurred_at_problem
from elephantasm.schemas.common import check_json_fields
from elephantasm.schemas.event_batch import EventIn
from elephantasm.schemas.events import EventCreate
from elephantasm.services.animas import live_anima_values
from elephantasm.services.event_copy import StoredRow, copy_events
from elephantasm.settings import Settings

_encode = msgspec.json.Encoder().encode


def _utf8_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def event_size(data: EventCreate | EventIn, meta: bytes | None = None) -> int:
    """UTF-8 bytes of an event's content, summary and meta (as the compact JSON stored; ``meta`` when
    the caller has encoded it already)."""
    size = _utf8_len(data.content)
    if data.summary:
        size += _utf8_len(data.summary)
    if data.meta:
        # the compact UTF-8 JSON that is stored (event_copy.meta_json)
        size += len(_encode(data.meta) if meta is None else meta)
    return size


def _check_size(position: int, count: int, size: int, max_bytes: int) -> None:
    if size > max_bytes:
        where = f"events[{position}]" if count > 1 else "event"
        raise PayloadTooLargeError(
            f"{where} is {size} bytes (content + summary + meta); the limit is {max_bytes} bytes"
        )


def _check_occurred_at(data: EventCreate | EventIn, now: datetime, where: str) -> None:
    problem = occurred_at_problem(data.occurred_at, now) if data.occurred_at else None
    if problem:
        raise ValidationError(f"{where + '.' if where else ''}occurred_at: {problem}")


def check_events(events: list[EventCreate], settings: Settings, now: datetime) -> None:
    """Every check that needs the settings or the clock, before anything is written: sizes (413),
    JSON depth/size of ``meta`` and the ``occurred_at`` window, 1900 to now + 1 day (422)."""
    for position, data in enumerate(events):
        where = f"events[{position}]" if len(events) > 1 else ""
        check_json_fields(data, settings.max_json_depth, settings.max_json_bytes, where)
        _check_occurred_at(data, now, where)
    for position, data in enumerate(events):  # after the depth checks: sizing encodes meta
        _check_size(position, len(events), event_size(data), settings.max_event_bytes)


def check_batch(events: list[EventIn], settings: Settings, now: datetime) -> list[str]:
    """:func:`check_events` for a batch decoded by :func:`~elephantasm.schemas.event_batch.decode_batch`:
    the same checks, order and messages, with each ``meta`` encoded once. Returns the events' ``meta``
    as the JSON text to store (what :func:`~elephantasm.services.event_copy.meta_json` would give)."""
    metas = [_encode(e.meta) for e in events]
    for position, (data, meta) in enumerate(zip(events, metas, strict=True)):
        where = f"events[{position}]" if len(events) > 1 else ""
        # A value nests no deeper than it has brackets; only a value that might break a limit is walked.
        if len(meta) > settings.max_json_bytes or meta.count(b"{") + meta.count(b"[") > settings.max_json_depth:
            problem = json_problem(data.meta, settings.max_json_depth, settings.max_json_bytes)
            if problem:
                raise ValidationError(f"{where + '.' if where else ''}meta: {problem}")
        _check_occurred_at(data, now, where)
    for position, (data, meta) in enumerate(zip(events, metas, strict=True)):
        _check_size(position, len(events), event_size(data, meta), settings.max_event_bytes)
    return [m.decode() for m in metas]


async def record_events(
    session: AsyncSession, org_id: uuid.UUID, events: list[EventCreate], now: datetime
) -> list[StoredRow]:
    """Insert events in the session's transaction (the caller commits); the stored rows in request
    order (:func:`elephantasm.services.event_copy.copy_events` on the session's connection)."""
    return await copy_events(await session.connection(), org_id, events, now)


async def get_event(session: AsyncSession, org_id: uuid.UUID, event_id: uuid.UUID) -> Event:
    """One event of the org, or NotFoundError."""
    event = await q.event_of_org(session, org_id, event_id)
    if event is None:
        raise NotFoundError(f"event {event_id} not found")
    return event


EventFilter = q.EventFilter


async def list_events(
    session: AsyncSession, org_id: uuid.UUID, flt: q.EventFilter, limit: int, cursor: str | None
) -> tuple[list[Event], str | None]:
    """Events in chronological order (occurred_at, id), keyset-paginated; NotFoundError for a
    filter on another org's (or a deleted) anima: a 404, not an empty page."""
    anima = None
    if flt.anima_id:  # its key (what its events are indexed by) and whether they are in the time indexes
        key, indexed = await live_anima_values(session, org_id, flt.anima_id, col(Anima.key), col(Anima.events_indexed))
        anima = (int(key), bool(indexed))
    return await q.list_events(session, org_id, flt, limit, cursor, anima)
