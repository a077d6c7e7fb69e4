"""The single-event hot path: one statement checks the anima, inserts and bumps ``state_version``.

Extract is the most frequent write. It runs as one prepared statement on the pooled asyncpg
connection, outside an explicit transaction: the statement is its own transaction (insert and
bump commit together, before the caller answers), so the request costs one round trip instead of
three (``BEGIN``, statement, ``COMMIT``). See benchmarks/RESULTS.md (ingest) for the measurements.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from elephantasm.schemas.events import EventCreate
from elephantasm.services.event_copy import NEW_ROW_COLUMNS, ROW_COLUMNS, STORED, event_values

# ``anima`` locks the org's live anima row (a missing or foreign anima inserts nothing) and reads its
# ``event_seq`` after the lock: seqs are handed out in commit order, and a concurrent insert with the
# same dedupe_key has committed before ON CONFLICT looks. The UPDATE only touches the anima when a row
# was really inserted: a dedupe hit changes nothing (no seq, no state_version).
_INSERT_ONE = f"""
WITH anima AS (
    SELECT a.id, a.event_seq FROM animas a
    WHERE a.id = $3 AND a.org_id = $2 AND a.deleted_at IS NULL
    FOR NO KEY UPDATE
), ins AS (
    INSERT INTO events (id, org_id, anima_id, event_type, role, author, summary, content, occurred_at,
                        session_id, meta, source_uri, dedupe_key, importance_score, created_at, updated_at, seq)
    SELECT $1, $2, a.id, $4, $5, $6, $7, $8, $9, $10, $11::jsonb, $12, $13, $14, $15, $15, a.event_seq + 1
    FROM anima a
    ON CONFLICT (anima_id, dedupe_key) DO NOTHING
    RETURNING {STORED}, seq
), bump AS (
    UPDATE animas a SET state_version = a.state_version + 1, event_seq = ins.seq,
           last_event_at = greatest(coalesce(a.last_event_at, $9), $9)
    FROM ins WHERE a.id = ins.anima_id
)
SELECT {NEW_ROW_COLUMNS} FROM ins
"""

_EXISTING = f"SELECT {ROW_COLUMNS} FROM events e WHERE e.anima_id = $1 AND e.dedupe_key = $2 AND e.org_id = $3"


async def insert_one(
    conn: Any, org_id: uuid.UUID, data: EventCreate, now: datetime
) -> tuple[dict[str, Any] | None, bool]:
    """Insert one event on an asyncpg connection (``elephantasm.db.raw``), committed when this returns.

    Returns ``(row, created)`` with ``meta`` as JSON text; ``(None, False)`` means the anima is not
    the org's. A dedupe hit returns the stored row with ``created=False``.
    """
    row = await conn.fetchrow(
        _INSERT_ONE,
        uuid.uuid4(),
        org_id,
        *event_values(data, now),
        now,
    )
    if row is not None:
        return dict(row), True
    if data.dedupe_key is None:
        return None, False
    existing = await conn.fetchrow(_EXISTING, data.anima_id, data.dedupe_key, org_id)
    return (dict(existing), False) if existing is not None else (None, False)
