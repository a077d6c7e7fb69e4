"""Helpers of the small-vs-large events tests: flip an anima's events into the time
and session indexes whatever their number, and read the flags."""

from __future__ import annotations

import uuid

from sqlalchemy import text

from elephantasm.runtime import Runtime

_FLIP = text("""
WITH a AS (UPDATE animas SET events_indexed = true WHERE id = :a RETURNING key)
UPDATE events e SET time_indexed = true FROM a WHERE e.anima_key = a.key
""")
_FLAGS = text("""
SELECT a.events_indexed, count(*) FILTER (WHERE e.time_indexed), count(*) FILTER (WHERE e.time_indexed IS NULL)
FROM animas a LEFT JOIN events e ON e.anima_key = a.key WHERE a.id = :a GROUP BY a.events_indexed
""")


async def flip_events(runtime: Runtime, anima: uuid.UUID) -> None:
    """Flip the anima as the insert that crosses ``size_switches.EVENT_THRESHOLD`` would, below it."""
    async with runtime.engine.begin() as conn:
        await conn.execute(_FLIP, {"a": anima})


async def event_flags(runtime: Runtime, anima: uuid.UUID) -> tuple[bool, int, int]:
    """The anima's ``events_indexed``, and how many of its events are flagged and unflagged."""
    async with runtime.engine.connect() as conn:
        flipped, on, off = (await conn.execute(_FLAGS, {"a": anima})).one()
    return bool(flipped), int(on), int(off)
