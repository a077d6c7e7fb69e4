"""Moving an anima's memories into the HNSW, pack and full-text indexes once it is large.

Small animas are searched exactly; at ``INDEX_THRESHOLD`` live memories the dreamer's write flips
``animas.vectors_indexed`` and flags the anima's rows ``vector_indexed`` in the same transaction
(later rows copy the anima's flag by trigger).
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import func, literal, select, update

from elephantasm.db import vectors
from elephantasm.db.models import Anima, Knowledge, Memory
from elephantasm.db.tables import table_of

_ANIMAS, _MEMORIES = table_of(Anima), table_of(Memory)
_FLAGGED = (_MEMORIES, table_of(Knowledge))


async def index_vectors_if_large(
    session: Any, org_id: uuid.UUID, anima_id: uuid.UUID, threshold: int | None = None
) -> bool:
    """Flip the anima to the HNSW path if its live memories reached ``threshold`` (default
    ``INDEX_THRESHOLD``) and it is not there yet; returns whether it flipped now. ``session``: an
    AsyncSession or AsyncConnection, inside the transaction that wrote the memories."""
    limit = vectors.INDEX_THRESHOLD if threshold is None else threshold
    m = _MEMORIES.c
    # Counting stops at the threshold: at most ``limit`` entries of an anima-keyed index.
    live = select(literal(1)).where(m.anima_id == anima_id, m.deleted_at.is_(None), m.merged_into.is_(None))
    count = select(func.count()).select_from(live.limit(limit).subquery()).scalar_subquery()
    a = _ANIMAS.c
    flip = (
        update(_ANIMAS)
        .where(a.id == anima_id, a.org_id == org_id, ~a.vectors_indexed, count >= limit)
        .values(vectors_indexed=True)
        .returning(a.id)
    )
    if (await session.execute(flip)).first() is None:
        return False
    # Statements of their own (not CTEs of the flip): each takes a new snapshot, so it also marks
    # rows committed after the flip's. (Nothing else inserts into an existing anima while its
    # dreamer runs: one run per anima, and import makes a new anima.)
    for table in _FLAGGED:
        t = table.c
        await session.execute(
            update(table)
            .where(t.anima_id == anima_id, t.org_id == org_id, ~t.vector_indexed)
            .values(vector_indexed=True)
        )
    return True


async def anima_is_indexed(session: Any, anima_id: uuid.UUID) -> bool:
    """The anima's ``vectors_indexed``: its memories and knowledge are in the HNSW, pack and
    full-text indexes (large), or searched by scanning its own rows (small). For the dreamer, which
    already holds the anima (no org or liveness check; no row reads as small)."""
    stmt = select(_ANIMAS.c.vectors_indexed).where(_ANIMAS.c.id == anima_id)
    return bool((await session.execute(stmt)).scalar())
