"""Helpers for the dreamer's DB-facing tests: record events, build runtimes, read provenance."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm.attributes import set_committed_value

from elephantasm.db.models import Anima, DreamAction, DreamChunk, Event, Memory
from elephantasm.db.scopes import of_anima
from elephantasm.runtime import Runtime
from elephantasm.schemas.animas import AnimaCreate
from elephantasm.schemas.events import EventCreate
from elephantasm.services.animas import create_anima
from elephantasm.services.dreams import DreamTasks
from elephantasm.services.dreams.journal import JournalEntry, expand
from elephantasm.services.events import record_events

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)


def turns(texts: Sequence[str], session: str = "s1", start: datetime = T0, step: float = 60.0) -> list[dict]:
    """Alternating user/assistant messages ``step`` seconds apart."""
    out = []
    for i, text in enumerate(texts):
        user = i % 2 == 0
        out.append(
            {
                "event_type": "message.in" if user else "message.out",
                "role": "user" if user else "assistant",
                "content": text,
                "session_id": session,
                "occurred_at": start + timedelta(seconds=step * i),
            }
        )
    return out


async def new_anima(runtime: Runtime, org_id: uuid.UUID, name: str = "dreamer-test") -> uuid.UUID:
    """Create an anima directly through the service."""
    async with runtime.unit_of_work() as session:
        return (await create_anima(session, org_id, AnimaCreate(name=name))).id


async def add_events(runtime: Runtime, org_id: uuid.UUID, anima_id: uuid.UUID, specs: Sequence[dict]) -> list[Event]:
    """Record events (as ``POST /api/events/batch`` would) and return them in order."""
    data = [EventCreate(anima_id=anima_id, **spec) for spec in specs]
    async with runtime.unit_of_work() as session:
        stored = await record_events(session, org_id, data, runtime.clock())
    return [_event(s.row) for s in stored]


def _event(row: dict[str, Any]) -> Event:
    """A stored row as an ``Event`` (not attached to a session), with its derived ``anima_id`` and
    ``distilled_at``, which are not model fields (``Event(...)`` would drop them)."""
    event = Event(**(row | {"meta": json.loads(row["meta"])}))
    for derived in ("anima_id", "distilled_at"):
        set_committed_value(event, derived, row[derived])
    return event


def variant(runtime: Runtime, engine: Any = None, **settings: Any) -> Runtime:
    """The same database and pool with other settings / engine and its own background tasks."""
    return dataclasses.replace(
        runtime,
        settings=runtime.settings.model_copy(update=settings),
        dream_engine=engine if engine is not None else runtime.dream_engine,
        dream_tasks=DreamTasks(),
    )


async def live_provenance(runtime: Runtime, anima_id: uuid.UUID) -> dict[uuid.UUID, set[uuid.UUID]]:
    """memory id → its event ids, for the anima's live memories (not deleted, not merged away)."""
    stmt = select(Memory.id, Memory.event_ids).where(
        Memory.anima_id == anima_id, Memory.deleted_at.is_(None), Memory.merged_into.is_(None)
    )
    async with runtime.read_session() as session:
        return {memory_id: set(event_ids) for memory_id, event_ids in (await session.execute(stmt)).all() if event_ids}


async def pending_ids(runtime: Runtime, anima_id: uuid.UUID) -> set[uuid.UUID]:
    """Events of the anima not yet distilled: above its watermark. Checks on the way that the
    ``distilled_at`` every reader sees (derived from the chunks) says the same."""
    async with runtime.read_session() as session:
        rows = (
            await session.execute(
                select(Event.id, Event.distilled_at, Event.seq > Anima.distilled_seq)
                .join(Anima, Anima.key == Event.anima_key)
                .where(Anima.id == anima_id)
            )
        ).all()
    assert all((at is None) == above for _, at, above in rows), "distilled_at disagrees with the watermark"
    return {event_id for event_id, _, above in rows if above}


async def claimed_count(runtime: Runtime, anima_id: uuid.UUID) -> int:
    """Pending events inside a claimed (not yet distilled) chunk of the anima."""
    async with runtime.read_session() as session:
        return (
            await session.execute(
                select(func.count())
                .select_from(Event)
                .join(
                    DreamChunk,
                    (DreamChunk.anima_id == anima_id) & Event.seq.between(DreamChunk.first_seq, DreamChunk.last_seq),
                )
                .where(*of_anima(Event, anima_id), DreamChunk.distilled_at.is_(None))
            )
        ).scalar_one()


async def wait_finished(client: httpx.AsyncClient, headers: dict, run_id: str, timeout: float = 30.0) -> dict:
    """Poll ``GET /api/dreams/sessions/{id}`` until the run is no longer running."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        r = await client.get(f"/api/dreams/sessions/{run_id}", headers=headers)
        assert r.status_code == 200, r.text
        if r.json()["status"] != "running":
            return r.json()
        assert asyncio.get_running_loop().time() < deadline, f"run {run_id} still running"
        await asyncio.sleep(0.05)


async def journal(session: AsyncSession, *where: Any) -> list[JournalEntry]:
    """The journal entries of the dream_actions rows matching ``where``, in the readers' order."""
    t = DreamAction.__table__  # type: ignore[attr-defined]
    rows = await session.execute(select(t).where(*where).order_by(t.c.created_at, t.c.action, t.c.id))
    return [e for row in rows.all() for e in expand(row)]


async def wait_for_dreams(tasks: DreamTasks) -> None:
    """Wait until every background dream run of ``tasks`` has ended."""
    while tasks._tasks:
        await asyncio.gather(*list(tasks._tasks), return_exceptions=True)
