"""Size switches: an anima's rows enter the large-anima indexes only once the anima is large.

Memories and knowledge enter the HNSW, pack and full-text indexes at :data:`MEMORY_THRESHOLD` live
memories (``animas.vectors_indexed``, per row ``vector_indexed``); events enter the time and session
indexes at :data:`EVENT_THRESHOLD` numbered events (``animas.events_indexed``, per row ``time_indexed``).
Below them a reader scans the anima's few rows through an anima-keyed btree about as fast, and most
animas (one per end user) spare the indexes' bytes: 434 MB per 1,000 conversations, 916 MB with both
thresholds at 1 (``storage --size small``; docs/design.md, "Size switches").

A switch flips once and for good, the anima's flag and all its rows' in one transaction; later
inserts copy the anima's flag (events in their insert statements, :func:`event_row_flag`; memories
and knowledge by the ``trg_*_vector_indexed`` triggers). A reader names a row flag (the partial
indexes' predicate) only for a flipped anima, as a partial index serves only queries that state its
predicate; the flag never goes back, so it may be read in an earlier statement. ``time_indexed`` is
NULL, not false, for a small anima: a NULL costs a null-bitmap bit, a stored boolean 8 bytes of
alignment at the end of an events row.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import ColumnElement, text, true

MEMORY_THRESHOLD = 2000
"""Live memories at which an anima's memories and knowledge enter the HNSW, pack and full-text indexes."""

EVENT_THRESHOLD = 1000
"""Numbered events (``animas.event_seq``) at which an anima's events enter the time and session indexes."""

VECTOR_FLAG = "vector_indexed"
"""The memories' and knowledge's column saying the row is in the large-anima indexes (their predicate)."""

EVENT_FLAG = "time_indexed"
"""The events' column saying the row is in the time and session indexes (their predicate)."""


def _col(source: Any, name: str) -> Any:
    return source.c[name] if hasattr(source, "c") else getattr(source, name)


def vector_rows_sql(alias: str, indexed: bool) -> str:
    """``AND <alias>.vector_indexed`` for a memories or knowledge read of a large anima (``indexed``:
    its ``vectors_indexed``), so the HNSW, pack and full-text indexes apply; else nothing."""
    return f" AND {alias}.{VECTOR_FLAG}" if indexed else ""


def event_rows_sql(alias: str, indexed: bool) -> str:
    """``AND <alias>.time_indexed`` for an events read of a large anima (``indexed``: its
    ``events_indexed``), so the time and session indexes apply; else nothing."""
    return f" AND {alias}.{EVENT_FLAG}" if indexed else ""


def vector_rows(source: Any, indexed: bool) -> ColumnElement[bool]:
    """:func:`vector_rows_sql` for SQLAlchemy: the bare flag column for a large anima, else ``true()``
    (which vanishes next to another condition)."""
    return _col(source, VECTOR_FLAG) if indexed else true()


def event_rows(source: Any, indexed: bool) -> ColumnElement[bool]:
    """:func:`event_rows_sql` for SQLAlchemy (bare column: ``IS TRUE`` would not prove the predicate)."""
    return _col(source, EVENT_FLAG) if indexed else true()


def events_large(event_seq: int) -> bool:
    """Whether an anima that numbered ``event_seq`` events belongs in the time and session indexes."""
    return event_seq >= EVENT_THRESHOLD


def event_row_flag(anima: str) -> str:
    """SQL: the ``time_indexed`` value of a new event of the anima row aliased ``anima``."""
    return f"CASE WHEN {anima}.events_indexed THEN true END"


def event_flip_due(event: str) -> str:
    """SQL: the new event row aliased ``event`` took its unflipped anima to :data:`EVENT_THRESHOLD`."""
    return f"{event}.seq >= {EVENT_THRESHOLD} AND {event}.{EVENT_FLAG} IS NULL"


def event_flip_sql(ids: str) -> str:
    """SQL that flips the animas of the uuid[] expression ``ids`` that reached :data:`EVENT_THRESHOLD`:
    the anima row and all its events at once.

    Only for a caller whose transaction already holds the animas' row locks (taken by an earlier
    statement): then this statement's snapshot holds every event of those animas (another inserter
    needs the lock, so it committed before it), and no insert can slip in until the caller commits."""
    return f"""
WITH flipped AS (
    UPDATE animas SET events_indexed = true
    WHERE id = ANY({ids}) AND NOT events_indexed AND event_seq >= {EVENT_THRESHOLD}
    RETURNING key
)
UPDATE events e SET {EVENT_FLAG} = true FROM flipped f WHERE e.anima_key = f.key AND e.{EVENT_FLAG} IS NULL
"""


EVENT_FLIP = text(event_flip_sql("CAST(:ids AS uuid[])"))
"""The events flip for SQLAlchemy, the animas in the bound parameter ``:ids``."""

# Counting stops at the threshold: at most ``:limit`` entries of an anima-keyed index.
_VECTOR_FLIP = text("""
UPDATE animas SET vectors_indexed = true
WHERE id = :anima AND org_id = :org AND NOT vectors_indexed AND (
    SELECT count(*) FROM (SELECT 1 FROM memories m
                          WHERE m.anima_id = :anima AND m.deleted_at IS NULL AND m.merged_into IS NULL
                          LIMIT :limit) live) >= :limit
RETURNING id
""")
_VECTOR_MARKS = [
    text(f"UPDATE {t} SET {VECTOR_FLAG} = true WHERE anima_id = :anima AND org_id = :org AND NOT {VECTOR_FLAG}")
    for t in ("memories", "knowledge")
]
_VECTORS_INDEXED = text("SELECT vectors_indexed FROM animas WHERE id = :anima")


async def index_vectors_if_large(
    session: Any, org_id: uuid.UUID, anima_id: uuid.UUID, threshold: int | None = None
) -> bool:
    """Flip the anima's vectors switch if its live memories reached ``threshold`` (default
    :data:`MEMORY_THRESHOLD`) and it is not flipped yet; returns whether it flipped now.
    ``session``: an AsyncSession or AsyncConnection, inside the transaction that wrote the memories."""
    limit = MEMORY_THRESHOLD if threshold is None else threshold
    params = {"anima": anima_id, "org": org_id, "limit": limit}
    if (await session.execute(_VECTOR_FLIP, params)).first() is None:
        return False
    # Statements of their own (not CTEs of the flip): each takes a new snapshot, so it also marks
    # rows committed after the flip's. (Nothing else inserts into an existing anima while its
    # dreamer runs: one run per anima, and import makes a new anima.)
    for mark in _VECTOR_MARKS:
        await session.execute(mark, params)
    return True


async def vectors_indexed(session: Any, anima_id: uuid.UUID) -> bool:
    """The anima's ``vectors_indexed``, for the dreamer, which already holds the anima (no org or
    liveness check)."""
    return bool((await session.execute(_VECTORS_INDEXED, {"anima": anima_id})).scalar())
