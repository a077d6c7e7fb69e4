"""The single-event hot path: one statement checks the anima, bumps it (``state_version``, ``event_seq``)
and inserts. Extract is the most frequent write: as one prepared statement outside an explicit
transaction (insert and bump commit together) it costs one round trip instead of three.
"""

from __future__ import annotations

import logging
import uuid
from datetime import datetime
from typing import Any

import asyncpg

from elephantasm.db import size_switches
from elephantasm.db.models import DEDUPE_KEYED, EVENT_META
from elephantasm.ids import uuid7
from elephantasm.schemas.events import EventCreate
from elephantasm.services.event_copy import RETURNED, event_values, new_row_columns, row_columns

# ``anima`` bumps the org's live anima (a missing or foreign anima inserts nothing) and hands out
# the next seq under that row lock, so seqs are in commit order; the anima row is touched once, first
# (a later access in the same statement would see it through a stale snapshot and could deadlock
# with another locker queued on it). A stored event with the same dedupe_key means no bump and no
# insert: a dedupe hit changes nothing. Only two requests with one dedupe_key in flight at once can
# both pass that check; the second then inserts nothing (ON CONFLICT) and leaves an unused seq and
# one extra state_version (a cache miss, never a stale pack).
_INSERT_ONE = f"""
WITH anima AS (
    UPDATE animas SET state_version = state_version + 1, event_seq = event_seq + 1,
           last_event_at = greatest(coalesce(last_event_at, $9), $9)
    WHERE id = $3 AND org_id = $2 AND deleted_at IS NULL
      AND NOT EXISTS (SELECT 1 FROM events d WHERE d.anima_key = animas.key AND d.dedupe_key = $13)
    RETURNING id, event_seq, key, events_indexed
), ins AS (
    INSERT INTO events (id, event_type, role, author, summary, content, occurred_at, session_id, meta,
                        source_uri, dedupe_key, importance_score, created_at, seq, anima_key, {size_switches.EVENT_FLAG})
    SELECT $1, $4::event_type, $5, $6, $7, $8, $9, $10, {EVENT_META.store_sql("$11::jsonb")}, $12, $13, $14, $15,
           a.event_seq, a.key, {size_switches.event_row_flag("a")}
    FROM anima a
    ON CONFLICT (anima_key, dedupe_key) WHERE {DEDUPE_KEYED} DO NOTHING
    RETURNING {RETURNED}, seq, {size_switches.EVENT_FLAG}
)
SELECT {new_row_columns("$3::uuid")}, {size_switches.event_flip_due("ins")} AS flip
FROM ins
"""

# The flip (size_switches.event_flip_sql) reads the anima's events in a statement of its own, after this
# one has locked the anima row: a single statement would read them from a snapshot taken before it
# waited for the lock, and miss the rows of an insert that committed meanwhile.
_LOCK = "SELECT 1 FROM animas WHERE id = $1 FOR NO KEY UPDATE"
_FLIP = size_switches.event_flip_sql("ARRAY[$1::uuid]")

log = logging.getLogger(__name__)

_EXISTING = (
    f"SELECT {row_columns('$1::uuid')} FROM events e "
    "WHERE e.anima_key = (SELECT key FROM animas WHERE id = $1 AND org_id = $3) AND e.dedupe_key = $2"
)


async def insert_one(
    conn: Any, org_id: uuid.UUID, data: EventCreate, now: datetime
) -> tuple[dict[str, Any] | None, bool]:
    """Insert one event on an asyncpg connection (``elephantasm.db.raw``), committed when this returns.

    Returns ``(row, created)`` with ``meta`` as JSON text; ``(None, False)`` means the anima is not
    the org's. A dedupe hit returns the stored row with ``created=False``.
    """
    row = await conn.fetchrow(_INSERT_ONE, uuid7(), org_id, *event_values(data, now), now)
    if row is not None:
        stored = dict(row)
        if stored.pop("flip"):
            await _flip(conn, data.anima_id)
        return stored, True
    if data.dedupe_key is None:
        return None, False
    existing = await conn.fetchrow(_EXISTING, data.anima_id, data.dedupe_key, org_id)
    return (dict(existing), False) if existing is not None else (None, False)


async def _flip(conn: Any, anima_id: uuid.UUID) -> None:
    """Put the anima's events in the time and session indexes (``size_switches``), in a transaction of
    its own after the insert (which is committed: a failed flip leaves it acknowledged, and the next
    insert, still over the threshold and unflipped, tries again)."""
    try:
        async with conn.transaction():
            await conn.execute(_LOCK, anima_id)
            await conn.execute(_FLIP, anima_id)
    except asyncpg.PostgresError:  # the event is stored: answer it; the flip waits for the next insert
        log.warning("events of anima %s not flipped to the time indexes", anima_id, exc_info=True)
