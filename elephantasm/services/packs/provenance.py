"""Provenance (source event ids) of the items a pack serves, read after packing in the same snapshot.

A compile reads ~400–700 candidates and serves ~100. Reading every candidate's provenance with its
row (a correlated sub-select per row; for knowledge, through its memories) cost database time and
the decoding of an id array per row for items the budget then left out. Instead one statement reads
the provenance of the served memories and knowledge (of every candidate when the inspector traces
the compile: it shows the cut ones too), on the compile's REPEATABLE READ connection, so it comes
from the same snapshot as the rows. Raw events are their own provenance and are never read here.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from elephantasm.db.driver_fetch import fetch
from elephantasm.services.packs.candidates import Candidate

# Same sets and order as the sub-selects it replaces: a memory's events, a knowledge item's
# events through its memories (each once); ordered by event id. No row: no provenance.
# A memory's ``event_ids`` are stored ascending, so they are read as they are.
_PROVENANCE = text("""
SELECT m.id, false AS knowledge, m.event_ids AS events
FROM memories m WHERE m.id = ANY(:memories) AND cardinality(m.event_ids) > 0
UNION ALL
SELECT km.knowledge_id, true, array_agg(DISTINCT x.event_id ORDER BY x.event_id)
FROM knowledge_memories km JOIN memories m ON m.id = km.memory_id CROSS JOIN LATERAL unnest(m.event_ids) AS x(event_id)
WHERE km.knowledge_id = ANY(:knowledge) GROUP BY km.knowledge_id
""")


async def fill_provenance(conn: AsyncConnection, candidates: Iterable[Candidate]) -> None:
    """Set ``provenance`` on the memory and knowledge ``candidates`` (this compile's own objects)."""
    wanted: dict[tuple[bool, uuid.UUID], list[Candidate]] = {}
    for c in candidates:
        if c.kind in ("memory", "knowledge"):
            wanted.setdefault((c.kind == "knowledge", c.id), []).append(c)
    if not wanted:
        return
    params = {
        "memories": [cid for knowledge, cid in wanted if not knowledge],
        "knowledge": [cid for knowledge, cid in wanted if knowledge],
    }
    for row in await fetch(conn, _PROVENANCE, params):
        events = tuple(row["events"])
        for c in wanted[(row["knowledge"], row["id"])]:
            c.provenance = events
