"""Which session is "current" for a pack.

By an explicit ``session_id``; else the session of the anima's most recent event; else, when
that event carries no session id, a time-gap session: the unbroken run of session-less events
(no silence longer than ``session_gap_minutes``) ending at the most recent one. A session whose
last activity is older than ``session_window_hours`` at ``as_of`` is over: there is no current
session, and its undistilled events compete as long-term candidates instead.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from elephantasm.db import event_state
from elephantasm.db.size_switches import event_rows_sql
from elephantasm.domain.presets import PackConfig

# Enough to walk back through any realistic gap-separated session; older turns of a longer
# run simply start the session a little later (they remain long-term candidates).
_GAP_SCAN_ROWS = 2000


def _gap_sql(indexed: bool) -> str:
    # A large anima's run comes from the session index (session_id NULL, then time); a small
    # anima's rows are not in it (elephantasm/db/size_switches.py): read by seq and sorted.
    return (
        f"SELECT occurred_at FROM events e WHERE {event_state.of_anima('e', 'anima', 'org')} "
        f"AND session_id IS NULL{event_rows_sql('e', indexed)} "
        "AND occurred_at >= :since AND occurred_at <= :until ORDER BY occurred_at DESC LIMIT :n"
    )


_GAP_SQL = {indexed: text(_gap_sql(indexed)) for indexed in (False, True)}
"""The session-less events' times, newest first, by the anima's ``events_indexed``."""


@dataclass(frozen=True, slots=True)
class SessionScope:
    """The current session: named (``session_id``), or time-gap based (session-less, from ``start``)."""

    session_id: str | None
    start: datetime | None = None


def session_start(times_desc: list[datetime], gap: timedelta) -> datetime | None:
    """Walk back from the newest time while consecutive gaps are at most ``gap``; the earliest reached."""
    if not times_desc:
        return None
    start = times_desc[0]
    for t in times_desc[1:]:
        if start - t > gap:
            break
        start = t
    return start


async def resolve_session(
    conn: AsyncConnection,
    org_id: uuid.UUID,
    anima_id: uuid.UUID,
    *,
    explicit: str | None,
    latest_session: str | None,
    last_event_at: datetime | None,
    as_of: datetime,
    config: PackConfig,
    events_indexed: bool,
) -> SessionScope | None:
    """The current session, or None when there is none (see module doc). ``events_indexed``: the
    anima's flag (``animas.events_indexed``), which picks how its session-less run is read."""
    if explicit:
        return SessionScope(explicit)
    if last_event_at is None:
        return None
    window = timedelta(hours=config.session_window_hours)
    if as_of - last_event_at > window:
        return None
    if latest_session:
        return SessionScope(latest_session)
    params = {
        "org": org_id,
        "anima": anima_id,
        "since": last_event_at - window,
        "until": last_event_at,
        "n": _GAP_SCAN_ROWS,
    }
    times = list((await conn.execute(_GAP_SQL[events_indexed], params)).scalars())
    start = session_start(times, timedelta(minutes=config.session_gap_minutes))
    return SessionScope(None, start or last_event_at)
