"""Per-anima locking, claims on pending events, and recovery of abandoned runs.

An advisory lock per anima (:func:`lock_anima`, taken before any row lock of the anima: the lock
order of ``docs/design.md``) serialises its dreamer transactions; the run row is the durable lease.
A chunk is the lowest pending seqs of the anima. A run that distils with no transaction open first
records a claim (a ``dream_chunks`` row without ``distilled_at``); its write moves the watermark only
if the claim is still its own and the watermark still where the chunk starts, so no event is
distilled twice. The dreamer never writes events.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from sqlalchemy import delete, exists, func, insert, literal, select, update
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncSession

from elephantasm.db.models import Anima, DreamChunk, DreamRun, Event
from elephantasm.db.scopes import of_anima
from elephantasm.db.tables import rowcount, table_of
from elephantasm.ids import uuid7
from elephantasm.services.dreams.liveness import advisory, lock_key

_EVENTS = table_of(Event)
_RUNS = table_of(DreamRun)
_ANIMAS = table_of(Anima)
_CHUNKS = table_of(DreamChunk)
_LOCK_NAMESPACE = b"elephantasm.dreamer:"

EVENT_FIELDS = "id event_type role author summary content occurred_at session_id importance_score".split()
"""What an engine sees of an event besides its ``meta`` (``writer.to_inputs``); a chunk reads these."""


async def lock_anima(session: AsyncSession, anima_id: uuid.UUID) -> None:
    """Serialise dreamer writes for ``anima_id`` until the current transaction ends."""
    await session.execute(advisory(func.pg_advisory_xact_lock, lock_key(_LOCK_NAMESPACE, anima_id)))


@dataclass(frozen=True)
class Chunk:
    """The next events a run distils: the lowest pending seqs of the anima, ``first_seq..last_seq``
    (``first_seq`` = the watermark + 1), their rows in time order, and the claim row when the chunk
    was claimed in an earlier transaction (None: it is written in the transaction that read it)."""

    first_seq: int
    last_seq: int
    rows: list[Row]
    claim_id: uuid.UUID | None = None


async def watermark(session: AsyncSession, anima_id: uuid.UUID) -> tuple[int, int]:
    """The anima's ``(distilled_seq, event_seq)``: pending events are the seqs between."""
    row = (
        await session.execute(select(_ANIMAS.c.distilled_seq, _ANIMAS.c.event_seq).where(_ANIMAS.c.id == anima_id))
    ).one()
    return int(row.distilled_seq), int(row.event_seq)


async def lock_events(session: AsyncSession, run: DreamRun, until_seq: int, limit: int) -> Chunk | None:
    """The chunk after the watermark, up to ``until_seq``, without a claim row (the caller holds
    :func:`lock_anima` until it has written the chunk, or claims it: :func:`claim_events`).

    None when nothing is pending, or when another running run holds a claim (its chunk must be
    written first: the watermark only moves up from where it is). Claims of runs no longer running
    are dropped here, so nothing abandoned blocks the anima.
    """
    anima_id = run.anima_id
    await _drop_dead_claims(session, anima_id, run.id)
    held = await session.execute(
        select(_CHUNKS.c.id).where(_CHUNKS.c.anima_id == anima_id, _CHUNKS.c.distilled_at.is_(None)).limit(1)
    )
    if held.first() is not None:
        return None
    after, _ = await watermark(session, anima_id)
    stmt = (
        select(*(_EVENTS.c[name] for name in (*EVENT_FIELDS, "meta", "seq")))
        .where(*of_anima(_EVENTS, anima_id), _EVENTS.c.seq > after, _EVENTS.c.seq <= until_seq)
        .order_by(_EVENTS.c.seq)
        .limit(limit)
    )
    rows = list((await session.execute(stmt)).all())
    if not rows:
        return None
    last = rows[-1].seq
    rows.sort(key=lambda r: (r.occurred_at, r.id))  # the engine reads a chunk in time order
    return Chunk(after + 1, last, rows)


async def _drop_dead_claims(session: AsyncSession, anima_id: uuid.UUID, also_of: uuid.UUID | None = None) -> None:
    """Drop the anima's claims whose run is no longer running (and those of run ``also_of``)."""
    live = [_RUNS.c.id == _CHUNKS.c.run_id, _RUNS.c.status == "running"]
    if also_of is not None:
        live.append(_RUNS.c.id != also_of)
    await session.execute(
        delete(_CHUNKS).where(_CHUNKS.c.anima_id == anima_id, _CHUNKS.c.distilled_at.is_(None), ~exists().where(*live))
    )


async def claim_events(session: AsyncSession, run: DreamRun, now: datetime, until_seq: int, limit: int) -> Chunk | None:
    """Claim the next chunk for ``run``: up to ``limit`` of the lowest pending seqs (by seq, not
    ``occurred_at``), none above ``until_seq`` (later events wait for the next run). The claim row
    outlives this transaction, so the engine works with none open."""
    # The caller holds lock_anima: it must take it before the run row it leases (the lock order).
    chunk = await lock_events(session, run, until_seq, limit)
    if chunk is None:
        return None
    claim_id = await _record(session, run.org_id, run.anima_id, run.id, chunk, now, distilled=False)
    return replace(chunk, claim_id=claim_id)


async def _record(
    session: AsyncSession,
    org_id: uuid.UUID,
    anima_id: uuid.UUID,
    run_id: uuid.UUID,
    chunk: Chunk,
    now: datetime,
    *,
    distilled: bool,
) -> uuid.UUID:
    """Insert the chunk's ``dream_chunks`` row (a claim, or already distilled); its id."""
    chunk_id = uuid7()
    values = {"first_seq": chunk.first_seq, "last_seq": chunk.last_seq, "claimed_at": now}
    if distilled:
        values["distilled_at"] = now
    await session.execute(
        insert(_CHUNKS).values(id=chunk_id, org_id=org_id, anima_id=anima_id, run_id=run_id, **values)
    )
    return chunk_id


async def mark_distilled(
    session: AsyncSession, org_id: uuid.UUID, anima_id: uuid.UUID, run_id: uuid.UUID, chunk: Chunk, now: datetime
) -> bool:
    """Record the chunk distilled and move the watermark past it. False when the claim is gone or
    another run moved the watermark meanwhile: the caller must then roll back."""
    if chunk.claim_id is not None:
        marked = await session.execute(
            update(_CHUNKS)
            .where(_CHUNKS.c.id == chunk.claim_id, _CHUNKS.c.run_id == run_id, _CHUNKS.c.distilled_at.is_(None))
            .values(distilled_at=now)
        )
        if rowcount(marked) != 1:
            return False
    else:
        await _record(session, org_id, anima_id, run_id, chunk, now, distilled=True)
    moved = await session.execute(
        update(_ANIMAS)
        .where(_ANIMAS.c.id == anima_id, _ANIMAS.c.distilled_seq == chunk.first_seq - 1)
        .values(distilled_seq=chunk.last_seq)
    )
    return rowcount(moved) == 1


async def count_pending(session: AsyncSession, org_id: uuid.UUID, anima_id: uuid.UUID, until_seq: int) -> int:
    """Events of the anima not yet distilled (claimed or not), none above ``until_seq``."""
    after = select(_ANIMAS.c.distilled_seq).where(_ANIMAS.c.id == anima_id).scalar_subquery()
    stmt = (
        select(func.count())
        .select_from(_EVENTS)
        .where(
            *of_anima(_EVENTS, anima_id, org_id=org_id),
            _EVENTS.c.seq > after,
            _EVENTS.c.seq <= until_seq,
        )
    )
    return int((await session.execute(stmt)).scalar_one())


async def release_claims(session: AsyncSession, run_ids: list[uuid.UUID]) -> int:
    """Return the chunks claimed (and not distilled) by these runs to the pending pool."""
    if not run_ids:
        return 0
    result = await session.execute(
        delete(_CHUNKS).where(_CHUNKS.c.run_id.in_(run_ids), _CHUNKS.c.distilled_at.is_(None))
    )
    return int(rowcount(result) or 0)


async def recover_stale_runs(
    session: AsyncSession, now: datetime, stale_after: timedelta, anima_id: uuid.UUID | None = None
) -> list[uuid.UUID]:
    """Fail running runs whose heartbeat is older than ``stale_after`` and release their claims.

    With ``anima_id``, also release orphaned claims of that anima (claims whose run is no longer
    running, e.g. a failure path that could not reach the database). Returns the abandoned run ids.
    """
    stmt = (
        update(_RUNS)
        .where(_RUNS.c.status == "running", _RUNS.c.heartbeat_at < now - stale_after)
        .values(
            status="failed",
            finished_at=now,
            error=literal("abandoned: no heartbeat since ")
            + func.to_char(func.timezone("UTC", _RUNS.c.heartbeat_at), 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
            + "; its claims were released",
        )
        .returning(_RUNS.c.id)
    )
    if anima_id is not None:
        stmt = stmt.where(_RUNS.c.anima_id == anima_id)
    stale = list((await session.execute(stmt)).scalars())
    await release_claims(session, stale)
    if anima_id is not None:
        await _drop_dead_claims(session, anima_id)
    return stale
