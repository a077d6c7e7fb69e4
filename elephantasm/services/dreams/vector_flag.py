"""Moving an anima's memories into the HNSW index once it is large, and
into the pack and full-text indexes.

Small animas are searched exactly (``elephantasm.db.vectors.large_anima_filter``); when the dreamer's
writes bring an anima's live memories to ``INDEX_THRESHOLD`` it flips ``animas.vectors_indexed`` and
marks every memory and knowledge item of the anima ``vector_indexed`` in the same transaction. Later
inserts copy the anima's flag through the triggers ``trg_memories_vector_indexed`` and
``trg_knowledge_vector_indexed``.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import text

from elephantasm.db import vectors

# Counting stops at the threshold: at most INDEX_THRESHOLD entries of an anima-keyed index.
_FLIP_ANIMA = text("""
UPDATE animas a SET vectors_indexed = true
WHERE a.id = :anima AND a.org_id = :org AND NOT a.vectors_indexed
  AND (SELECT count(*) FROM (SELECT 1 FROM memories m WHERE m.anima_id = :anima
       AND m.deleted_at IS NULL AND m.merged_into IS NULL LIMIT :threshold) x) >= :threshold
RETURNING a.id
""")
# A statement of its own (not a CTE of the flip): it takes a new snapshot, so it also marks memories
# committed after the flip's. (The trigger takes no lock on the anima row; nothing else inserts into
# an existing anima while its dreamer runs — one run per anima, and import makes a new anima.)
_INDEX_ROWS = tuple(
    text(f"UPDATE {table} SET vector_indexed = true WHERE anima_id = :anima AND org_id = :org AND NOT vector_indexed")
    for table in ("memories", "knowledge")
)


async def index_vectors_if_large(
    session: Any, org_id: uuid.UUID, anima_id: uuid.UUID, threshold: int | None = None
) -> bool:
    """Flip the anima to the HNSW path if its live memories reached ``threshold`` (default
    ``INDEX_THRESHOLD``) and it is not there yet; returns whether it flipped now. ``session``: an
    AsyncSession or AsyncConnection, inside the transaction that wrote the memories."""
    limit = vectors.INDEX_THRESHOLD if threshold is None else threshold
    params = {"anima": anima_id, "org": org_id, "threshold": limit}
    if (await session.execute(_FLIP_ANIMA, params)).first() is None:
        return False
    for statement in _INDEX_ROWS:
        await session.execute(statement, params)
    return True


_INDEXED = text("SELECT vectors_indexed FROM animas WHERE id = :anima")


async def anima_is_indexed(session: Any, anima_id: uuid.UUID) -> bool:
    """The anima's ``vectors_indexed``: its memories and knowledge are in the HNSW, pack and
    full-text indexes (large), or searched by scanning its own rows (small). For the dreamer, which
    already holds the anima (no org or liveness check; no row reads as small)."""
    return bool((await session.execute(_INDEXED, {"anima": anima_id})).scalar())
