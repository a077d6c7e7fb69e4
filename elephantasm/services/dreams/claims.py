"""Per-anima locking, claims on pending events, and recovery of abandoned runs.

Locking design. Two mechanisms, each doing one job:

- A **transaction-level** advisory lock per anima (``pg_advisory_xact_lock``) serialises the short
  dreamer transactions of one anima (starting a run, writing a chunk, curating, restoring an
  identity) across every process. It is released at commit, so no connection or transaction is
  held while an engine (possibly an LLM) works.
- The **run row** (``dream_runs.status = 'running'`` + ``heartbeat_at``) is the durable lease that
  says "this anima is being dreamt". Starting a run checks for a live lease under the lock, so there
  is at most one live run per anima. A run whose heartbeat is older than ``dreamer_stale_seconds``
  is declared abandoned (crashed process) and its claims are released.

Events are claimed with ``FOR UPDATE SKIP LOCKED`` and stamped with the run id; the final write
only marks events still claimed by that run, so even a run wrongly declared abandoned can never
distil an event another run has since claimed. When distilling is CPU work in this process (the
offline engine and a local embedder), a chunk is instead row-locked, distilled and written in one
transaction (:func:`lock_events`): no claim has to outlive a transaction, and each event is
updated once instead of twice.
"""

from __future__ import annotations

import hashlib
import uuid
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Select, and_, exists, func, select, text, update
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncSession

from elephantasm.db.models import DreamRun, Event
from elephantasm.db.scopes import org_scoped
from elephantasm.db.tables import rowcount, table_of

_EVENTS = table_of(Event)
_RUNS = table_of(DreamRun)
_LOCK_NAMESPACE = b"elephantasm.dreamer:"

CLAIM_COLUMNS = (
    _EVENTS.c.id,
    _EVENTS.c.event_type,
    _EVENTS.c.role,
    _EVENTS.c.author,
    _EVENTS.c.summary,
    _EVENTS.c.content,
    _EVENTS.c.occurred_at,
    _EVENTS.c.session_id,
    _EVENTS.c.importance_score,
    _EVENTS.c.meta,
)


def anima_lock_key(anima_id: uuid.UUID) -> int:
    """The signed 64-bit advisory-lock key of an anima (stable across processes and versions)."""
    digest = hashlib.blake2b(_LOCK_NAMESPACE + anima_id.bytes, digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


async def lock_anima(session: AsyncSession, anima_id: uuid.UUID) -> None:
    """Serialise dreamer writes for ``anima_id`` until the current transaction ends."""
    await session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": anima_lock_key(anima_id)})


def _pending(anima_id: uuid.UUID, cutoff: datetime, limit: int, *columns: Any) -> Select[Any]:
    """Up to ``limit`` pending, unclaimed events recorded by ``cutoff``, oldest occurrence first,
    row-locked (``SKIP LOCKED``: events another transaction holds are left to it)."""
    return (
        select(*columns)
        .where(
            _EVENTS.c.anima_id == anima_id,
            _EVENTS.c.distilled_at.is_(None),
            _EVENTS.c.claimed_by.is_(None),
            _EVENTS.c.created_at <= cutoff,
        )
        .order_by(_EVENTS.c.occurred_at, _EVENTS.c.id)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )


async def claim_events(
    session: AsyncSession, anima_id: uuid.UUID, run_id: uuid.UUID, now: datetime, cutoff: datetime, limit: int
) -> list[Row]:
    """Claim up to ``limit`` pending, unclaimed events recorded by ``cutoff``, oldest occurrence first.

    Pending means ``distilled_at IS NULL``, whatever the event's ``occurred_at``: a back-dated event
    is claimed like any other, and one recorded after ``cutoff`` waits for the next run.
    """
    stmt = (
        update(_EVENTS)
        .where(_EVENTS.c.id.in_(_pending(anima_id, cutoff, limit, _EVENTS.c.id).scalar_subquery()))
        .values(claimed_by=run_id, claimed_at=now)
        .returning(*CLAIM_COLUMNS)
    )
    rows = list((await session.execute(stmt)).all())
    rows.sort(key=lambda r: (r.occurred_at, r.id))
    return rows


async def lock_events(session: AsyncSession, anima_id: uuid.UUID, cutoff: datetime, limit: int) -> list[Row]:
    """The events :func:`claim_events` would claim, only row-locked for this transaction (no write).

    For a chunk distilled and written in the same transaction: the write stamps the claim and
    ``distilled_at`` in one update, so each event gets one new row version instead of two.
    """
    return list((await session.execute(_pending(anima_id, cutoff, limit, *CLAIM_COLUMNS))).all())


async def count_pending(
    session: AsyncSession, org_id: uuid.UUID, anima_id: uuid.UUID, cutoff: datetime | None = None
) -> int:
    """Events of the anima not yet distilled (claimed or not), optionally recorded by ``cutoff``."""
    stmt = (
        select(func.count())
        .select_from(_EVENTS)
        .where(_EVENTS.c.anima_id == anima_id, org_scoped(_EVENTS, org_id), _EVENTS.c.distilled_at.is_(None))
    )
    if cutoff is not None:
        stmt = stmt.where(_EVENTS.c.created_at <= cutoff)
    return int((await session.execute(stmt)).scalar_one())


async def release_claims(session: AsyncSession, run_ids: list[uuid.UUID]) -> int:
    """Return the undistilled events claimed by these runs to the pending pool."""
    if not run_ids:
        return 0
    result = await session.execute(
        update(_EVENTS)
        .where(_EVENTS.c.claimed_by.in_(run_ids), _EVENTS.c.distilled_at.is_(None))
        .values(claimed_by=None, claimed_at=None)
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
            error=text(
                "'abandoned: no heartbeat since ' || to_char(heartbeat_at AT TIME ZONE 'UTC', "
                "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') || '; its claims were released'"
            ),
        )
        .returning(_RUNS.c.id)
    )
    if anima_id is not None:
        stmt = stmt.where(_RUNS.c.anima_id == anima_id)
    stale = list((await session.execute(stmt)).scalars())
    await release_claims(session, stale)
    if anima_id is not None:
        live = exists().where(and_(_RUNS.c.id == _EVENTS.c.claimed_by, _RUNS.c.status == "running"))
        await session.execute(
            update(_EVENTS)
            .where(
                _EVENTS.c.anima_id == anima_id,
                _EVENTS.c.distilled_at.is_(None),
                _EVENTS.c.claimed_by.is_not(None),
                ~live,
            )
            .values(claimed_by=None, claimed_at=None)
        )
    return stale
