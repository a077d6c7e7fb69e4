"""The events' time and session indexes hold only large animas' events.

``ix_events_anima_occurred`` and ``ix_events_anima_session`` are partial: ``WHERE time_indexed``.
An anima with fewer than :data:`INDEX_THRESHOLD` numbered events (``animas.event_seq``) keeps its
events out of both; a reader of such an anima reads its few hundred rows through
``uq_events_anima_seq`` (which every anima keeps) and sorts them. Once ``event_seq`` reaches the
threshold the anima flips, once and for good: ``animas.events_indexed`` becomes true and every
event of the anima gets ``time_indexed = true`` in the same transaction, and every later insert
copies the anima's flag into its rows.

``time_indexed`` is NULL, not false, for a small anima's rows: an events row ends on an 8-byte
column, so a stored boolean would cost 8 bytes of alignment in every row, while a NULL costs only
its bit in the null bitmap the row already carries. A large anima's rows pay those 8 bytes.

A reader names the predicate (:func:`time_indexed`) only when the anima is flipped: a partial index
serves a query only when its predicate is in the query, and a small anima's rows do not match it.
Reading an anima's flag and its events in different statements is safe: the flag never goes back,
and a flip flags every row of the anima in the transaction that sets it.
"""

from __future__ import annotations

INDEX_THRESHOLD = 1000
"""Numbered events (``animas.event_seq``) at which an anima's events enter the time and session
indexes. Below it a reader sorts the anima's few hundred rows as fast as an index serves them, and
every such anima spares the two indexes' ~90 bytes per event (docs/design.md, "Size switches")."""


FLAG = "time_indexed"
"""The events column that puts a row in the time and session indexes (the indexes' predicate)."""


def time_indexed(alias: str, indexed: bool) -> str:
    """``AND <alias>.time_indexed`` for a flipped anima (so the planner can use the partial time and
    session indexes), else nothing (its rows are not in them)."""
    return f" AND {alias}.{FLAG}" if indexed else ""


def row_flag(anima: str) -> str:
    """The ``time_indexed`` value of a new event of the anima row aliased ``anima``: true once the
    anima is flipped, else NULL (no bytes in the row)."""
    return f"CASE WHEN {anima}.events_indexed THEN true END"


def flip_sql(ids: str) -> str:
    """SQL that flips the animas of the uuid[] expression ``ids`` (a bound parameter) that reached the
    threshold: the anima row and all its events at once.

    Only for a caller whose transaction already holds the animas' row locks (taken by an earlier
    statement): then this statement's snapshot holds every event of those animas (another inserter
    needs the lock, so it committed before it), and no insert can slip in until the caller commits."""
    return f"""
WITH flipped AS (
    UPDATE animas SET events_indexed = true
    WHERE id = ANY({ids}) AND NOT events_indexed AND event_seq >= {INDEX_THRESHOLD}
    RETURNING key
)
UPDATE events e SET {FLAG} = true FROM flipped f WHERE e.anima_key = f.key AND e.{FLAG} IS NULL
"""


FLIP_SQL = flip_sql("CAST(:ids AS uuid[])")
"""The flip for SQLAlchemy statements, the animas in the bound parameter ``:ids``."""
