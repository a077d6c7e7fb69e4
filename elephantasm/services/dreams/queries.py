"""Reads of knowledge (with provenance and supersession history) and of the dream journal."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from elephantasm.db.keyset import Direction, keyset_page
from elephantasm.db.models import DreamAction, DreamRun, Knowledge, KnowledgeMemory, Memory
from elephantasm.db.scopes import live_anima, org_scoped, visible
from elephantasm.db.tables import table_of
from elephantasm.db.vectors import indexed_vector
from elephantasm.domain.errors import NotFoundError
from elephantasm.services.dreams.journal_rows import JournalEntry, expand
from elephantasm.services.dreams.paging import (
    check_anima,
    check_anima_vectors,
    enable_filtered_vector_scan,
    readable_columns,
)

_K = table_of(Knowledge)
_K_COLS = readable_columns(_K)
_R = table_of(DreamRun)
_A = table_of(DreamAction)

_LINEAGE_SQL = text("""
WITH RECURSIVE fwd(id, next, depth) AS (
    SELECT id, superseded_by, 0 FROM knowledge WHERE id = :id
    UNION SELECT k.id, k.superseded_by, fwd.depth + 1 FROM knowledge k JOIN fwd ON k.id = fwd.next
    WHERE fwd.depth < 1000
), head AS (SELECT id FROM fwd ORDER BY depth DESC LIMIT 1),
back(id, depth) AS (
    SELECT id, 0 FROM head
    UNION SELECT k.id, back.depth + 1 FROM knowledge k JOIN back ON k.superseded_by = back.id WHERE back.depth < 1000
)
SELECT DISTINCT id FROM back
""")


async def list_knowledge(
    session: AsyncSession,
    org_id: uuid.UUID,
    anima_id: uuid.UUID | None,
    type_: str | None,
    topic: str | None,
    include_superseded: bool,
    limit: int,
    cursor: str | None,
) -> tuple[list[Any], str | None]:
    """Knowledge, newest first; current items only unless ``include_superseded``."""
    stmt = select(*_K_COLS, _K.c.created_at.label("page_at")).where(*visible(_K, org_id))
    if anima_id is not None:
        await check_anima(session, org_id, anima_id)
        stmt = stmt.where(_K.c.anima_id == anima_id)
    if type_ is not None:
        stmt = stmt.where(_K.c.type == type_)
    if topic is not None:
        stmt = stmt.where(_K.c.topic == topic)
    if not include_superseded:
        stmt = stmt.where(_K.c.valid_to.is_(None))
    return await keyset_page(
        session, stmt, at=_K.c.created_at, row_id=_K.c.id, limit=limit, cursor=cursor, direction=Direction.DESC
    )


async def get_knowledge(session: AsyncSession, org_id: uuid.UUID, knowledge_id: uuid.UUID) -> Any:
    """One knowledge item of the org (current or superseded), or NotFoundError."""
    row = (await session.execute(select(*_K_COLS).where(_K.c.id == knowledge_id, *visible(_K, org_id)))).one_or_none()
    if row is None:
        raise NotFoundError(f"knowledge {knowledge_id} not found")
    return row


async def knowledge_history(session: AsyncSession, org_id: uuid.UUID, knowledge_id: uuid.UUID) -> list[Any]:
    """The item's whole supersession chain (what it replaced and what replaced it), newest first."""
    await get_knowledge(session, org_id, knowledge_id)
    ids = list((await session.execute(_LINEAGE_SQL, {"id": knowledge_id})).scalars())
    stmt = (
        select(*_K_COLS)
        .where(_K.c.id.in_(ids), *visible(_K, org_id))
        .order_by(_K.c.valid_from.desc().nulls_last(), _K.c.created_at.desc(), _K.c.id.desc())
    )
    return list((await session.execute(stmt)).all())


async def knowledge_provenance(
    session: AsyncSession, org_id: uuid.UUID, knowledge_ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, tuple[list[uuid.UUID], list[uuid.UUID]]]:
    """Each item's source memory ids and, through them, source event ids (none for another org's)."""
    out: dict[uuid.UUID, tuple[list[uuid.UUID], list[uuid.UUID]]] = {k: ([], []) for k in knowledge_ids}
    if not knowledge_ids:
        return out
    links = await session.execute(
        select(col(KnowledgeMemory.knowledge_id), col(KnowledgeMemory.memory_id))
        .where(col(KnowledgeMemory.knowledge_id).in_(list(knowledge_ids)), org_scoped(KnowledgeMemory, org_id))
        .order_by(col(KnowledgeMemory.knowledge_id), col(KnowledgeMemory.memory_id))
    )
    memories_of: dict[uuid.UUID, list[uuid.UUID]] = {}
    for kid, mid in links.all():
        out[kid][0].append(mid)
        memories_of.setdefault(mid, [])
    if memories_of:
        rows = await session.execute(
            select(col(Memory.id), col(Memory.event_ids)).where(
                col(Memory.id).in_(list(memories_of)), org_scoped(Memory, org_id)
            )
        )
        for mid, eids in rows.all():
            memories_of[mid].extend(eids)
    for _kid, (mids, eids) in out.items():
        eids.extend(sorted({e for m in mids for e in memories_of.get(m, [])}))
    return out


async def search_knowledge(
    session: AsyncSession,
    org_id: uuid.UUID,
    anima_id: uuid.UUID,
    vector: Sequence[float],
    limit: int,
    include_superseded: bool = False,
    min_similarity: float | None = None,
    space: int | None = None,
) -> list[tuple[Any, float]]:
    """Nearest knowledge of one anima by cosine similarity, best first (current items by default).

    Only vectors of ``space`` (the query vector's) are compared."""
    indexed = await check_anima_vectors(session, org_id, anima_id)
    await enable_filtered_vector_scan(session)
    # A large anima: the width's HNSW index answers (its predicate names vector_indexed); a small
    # one's knowledge is compared exactly.
    key, same_width = indexed_vector(_K.c.embedding, len(vector))
    distance = key.cosine_distance(list(vector))
    stmt = (
        select(*_K_COLS, (1 - distance).label("similarity"))
        .where(*visible(_K, org_id), _K.c.anima_id == anima_id, same_width, _K.c.embedding_space == space)
        .order_by(distance, _K.c.id)
        .limit(limit)
    )
    if indexed:
        stmt = stmt.where(_K.c.vector_indexed)
    if not include_superseded:
        stmt = stmt.where(_K.c.valid_to.is_(None))
    if min_similarity is not None:
        stmt = stmt.where(distance <= 1 - min_similarity)
    return [(row, float(row.similarity)) for row in (await session.execute(stmt)).all()]


async def list_runs(
    session: AsyncSession,
    org_id: uuid.UUID,
    anima_id: uuid.UUID | None,
    status: str | None,
    limit: int,
    cursor: str | None,
) -> tuple[list[Any], str | None]:
    """Dream runs, newest first, optionally of one anima and status."""
    stmt = select(*_R.c, _R.c.started_at.label("page_at")).where(org_scoped(_R, org_id), live_anima(_R.c.anima_id))
    if anima_id is not None:
        await check_anima(session, org_id, anima_id)
        stmt = stmt.where(_R.c.anima_id == anima_id)
    if status is not None:
        stmt = stmt.where(_R.c.status == status)
    return await keyset_page(
        session, stmt, at=_R.c.started_at, row_id=_R.c.id, limit=limit, cursor=cursor, direction=Direction.DESC
    )


async def get_run(session: AsyncSession, org_id: uuid.UUID, run_id: uuid.UUID) -> Any:
    """One dream run of the org, or NotFoundError."""
    row = (
        await session.execute(select(*_R.c).where(_R.c.id == run_id, org_scoped(_R, org_id), live_anima(_R.c.anima_id)))
    ).one_or_none()
    if row is None:
        raise NotFoundError(f"dream session {run_id} not found")
    return row


async def run_actions(
    session: AsyncSession, org_id: uuid.UUID, run_id: uuid.UUID, limit: int
) -> tuple[list[JournalEntry], int]:
    """The first ``limit`` journal entries of a run in the order they were written, and how many exist
    (none for another org's run)."""
    mine = (_A.c.run_id == run_id, org_scoped(_A, org_id))
    size = func.cardinality(_A.c.target_ids)
    total = (await session.execute(select(func.coalesce(func.sum(size), 0)).where(*mine))).scalar_one()
    if not total or limit <= 0:
        return [], int(total)
    order = (_A.c.created_at, _A.c.action, _A.c.id)
    # Only the rows holding the first ``limit`` entries are sent (and their jsonb decompressed).
    ranked = select(*_A.c, (func.sum(size).over(order_by=order) - size).label("start")).where(*mine).subquery()
    rows = await session.execute(
        select(*(ranked.c[c.name] for c in _A.c))
        .where(ranked.c.start < limit)
        .order_by(*(ranked.c[c.name] for c in order))
    )
    return [e for row in rows.all() for e in expand(row)][:limit], int(total)
