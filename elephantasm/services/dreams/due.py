"""Which animas the scheduler should dream about now."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import exists, or_, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from elephantasm.db import event_state
from elephantasm.db.models import Anima, DreamRun, Memory
from elephantasm.db.tables import table_of

_ANIMAS, _MEMORIES, _RUNS = table_of(Anima), table_of(Memory), table_of(DreamRun)

# Pending = seq above the anima's watermark (db/event_state.py): animas with nothing pending
# are dismissed from their own row, the others count their pending range through uq_events_anima_seq.
_DUE_SQL = text(f"""
SELECT a.org_id, a.id AS anima_id, p.pending
FROM animas a
CROSS JOIN LATERAL (
  SELECT count(*) AS pending, max(e.created_at) AS newest, min(e.created_at) AS oldest
  FROM events e WHERE e.anima_key = a.key AND {event_state.pending("e", "a")}
) p
WHERE a.deleted_at IS NULL AND a.event_seq > a.distilled_seq
  AND a.dream_status <> 'failed' AND (a.dream_retry_at IS NULL OR a.dream_retry_at <= :now)
  AND NOT EXISTS (SELECT 1 FROM dream_runs r
                  WHERE r.anima_id = a.id AND r.status = 'running' AND r.heartbeat_at >= :fresh)
  AND p.pending >= :min_pending AND p.newest <= :quiet_before
ORDER BY p.oldest, a.id
LIMIT :limit
""")


@dataclass(frozen=True)
class DueAnima:
    """An anima with pending events and no live run."""

    org_id: uuid.UUID
    anima_id: uuid.UUID
    pending: int


async def find_due_animas(
    session: AsyncSession,
    now: datetime,
    *,
    min_pending: int = 1,
    quiet: timedelta = timedelta(0),
    stale_after: timedelta = timedelta(minutes=2),
    limit: int = 100,
) -> list[DueAnima]:
    """Animas with at least ``min_pending`` pending events, the newest recorded ``quiet`` ago or more.

    ``quiet`` is the debounce: a burst of events triggers one run once it has settled. Animas with a
    live run (heartbeat fresher than ``stale_after``) are skipped, and so are animas backing off after
    failed runs or parked as failed; longest-waiting first.
    """
    params = {"now": now, "fresh": now - stale_after, "quiet_before": now - quiet, "limit": limit}
    rows = await session.execute(_DUE_SQL, {**params, "min_pending": max(1, min_pending)})
    return [DueAnima(r.org_id, r.anima_id, r.pending) for r in rows]


async def find_sleepy_animas(
    session: AsyncSession, now: datetime, every: timedelta, limit: int = 100
) -> list[DueAnima]:
    """Animas with memories and no run for ``every``: their curation (decay, archive) is due."""
    a, m, r = _ANIMAS.c, _MEMORIES.c, _RUNS.c
    stmt = (
        select(a.org_id, a.id)
        .where(
            a.deleted_at.is_(None),
            a.dream_status != "failed",
            or_(a.dream_retry_at.is_(None), a.dream_retry_at <= now),
            exists().where(m.anima_id == a.id, m.deleted_at.is_(None)),
            ~exists().where(r.org_id == a.org_id, r.anima_id == a.id, r.started_at >= now - every),
        )
        .order_by(a.id)
        .limit(limit)
    )
    return [DueAnima(row.org_id, row.id, 0) for row in await session.execute(stmt)]
