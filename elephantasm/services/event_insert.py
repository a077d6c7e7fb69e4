"""The single-event hot path: one statement checks the anima, inserts and bumps ``state_version``.

Extract is the most frequent write. Doing it as one prepared statement (instead of select anima,
insert, re-select, update) takes the round trips from five to one and avoids rebuilding SQLAlchemy
expressions per call; see benchmarks/RESULTS.md (ingest) for the measurements behind this.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from elephantasm.schemas.events import EventCreate
from elephantasm.services.events import event_row

_COLUMNS = (
    "id, anima_id, event_type, role, author, summary, content, occurred_at, session_id, meta, "
    "source_uri, dedupe_key, importance_score, created_at, updated_at, distilled_at"
)

# The INSERT selects from the org's live anima, so a missing or foreign anima inserts nothing.
# The UPDATE only touches the anima when a row was really inserted: a dedupe hit changes nothing.
_INSERT_ONE = text(
    f"""
    WITH ins AS (
        INSERT INTO events (id, org_id, anima_id, event_type, role, author, summary, content, occurred_at,
                            session_id, meta, source_uri, dedupe_key, importance_score, created_at, updated_at)
        SELECT :id, :org_id, a.id, :event_type, :role, :author, :summary, :content, :occurred_at,
               :session_id, CAST(:meta AS jsonb), :source_uri, :dedupe_key, :importance_score, :created_at, :updated_at
        FROM animas a
        WHERE a.id = :anima_id AND a.org_id = :org_id AND a.deleted_at IS NULL
        ON CONFLICT (anima_id, dedupe_key) DO NOTHING
        RETURNING {_COLUMNS}
    ), bump AS (
        UPDATE animas SET state_version = state_version + 1,
               last_event_at = greatest(coalesce(last_event_at, :occurred_at), :occurred_at)
        WHERE id IN (SELECT anima_id FROM ins)
    )
    SELECT {_COLUMNS} FROM ins
    """
)

_EXISTING = text(
    f"""
    SELECT {_COLUMNS} FROM events
    WHERE anima_id = :anima_id AND dedupe_key = :dedupe_key AND org_id = :org_id
    """
)


async def insert_one(
    session: AsyncSession | AsyncConnection, org_id: uuid.UUID, data: EventCreate, now: datetime
) -> tuple[dict[str, Any] | None, bool]:
    """Insert one event. Returns ``(row, created)``; ``(None, False)`` means the anima is not the org's.

    A dedupe hit returns the stored row with ``created=False``.
    """
    # text() binds jsonb from a JSON string; everything else is the shared row shape.
    params = event_row(org_id, data, now) | {"meta": json.dumps(data.meta)}
    row = (await session.execute(_INSERT_ONE, params)).mappings().first()
    if row is not None:
        return dict(row), True
    if data.dedupe_key is None:
        return None, False
    existing = (
        await session.execute(
            _EXISTING, {"anima_id": data.anima_id, "dedupe_key": data.dedupe_key, "org_id": org_id}
        )
    ).mappings().first()
    return (dict(existing), False) if existing is not None else (None, False)
