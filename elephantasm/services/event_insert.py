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
from elephantasm.services.event_copy import ROW_COLUMNS, event_values

# The INSERT selects from the org's live anima, so a missing or foreign anima inserts nothing.
# The UPDATE only touches the anima when a row was really inserted: a dedupe hit changes nothing.
_INSERT_ONE = f"""
WITH ins AS (
    INSERT INTO events (id, org_id, anima_id, event_type, role, author, summary, content, occurred_at,
                        session_id, meta, source_uri, dedupe_key, importance_score, created_at, updated_at)
    SELECT $1, $2, a.id, $4, $5, $6, $7, $8, $9, $10, $11::jsonb, $12, $13, $14, $15, $15
    FROM animas a
    WHERE a.id = $3 AND a.org_id = $2 AND a.deleted_at IS NULL
    ON CONFLICT (anima_id, dedupe_key) DO NOTHING
    RETURNING *
), bump AS (
    UPDATE animas SET state_version = state_version + 1,
           last_event_at = greatest(coalesce(last_event_at, $9), $9)
    WHERE id IN (SELECT anima_id FROM ins)
)
SELECT {ROW_COLUMNS} FROM ins
"""

_EXISTING = f"SELECT {ROW_COLUMNS} FROM events WHERE anima_id = $1 AND dedupe_key = $2 AND org_id = $3"


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
