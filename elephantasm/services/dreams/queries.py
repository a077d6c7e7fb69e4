"""Reads of what dreams produce (knowledge with provenance and history, runs, the journal) and
the read helpers the memory reads share; every read is scoped to the caller's ``org_id``."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from elephantasm.db.keyset import Direction, keyset_page
from elephantasm.db.models import Anima, DreamAction, DreamRun, Knowledge, KnowledgeMemory, Memory
from elephantasm.db.scopes import live_anima, org_scoped, visible
from elephantasm.db.size_switches import vector_rows
from elephantasm.db.tables import table_of
from elephantasm.db.vectors import indexed_vector
from elephantasm.domain.errors import NotFoundError
from elephantasm.services.animas import live_anima_values
from elephantasm.services.dreams.journal import JournalEntry, expand


def readable_columns(table: Any) -> list[Any]:
    """Every column except the internals a client never sees (embedding, full-text vector, whether
    the row is in the HNSW index)."""
    return [c for c in table.c if c.name not in ("embedding", "fts", "vector_indexed")]


async def check_anima(session: AsyncSession, org_id: uuid.UUID, anima_id: uuid.UUID) -> bool:
    """NotFoundError unless the anima is a live one of the org (another org's is a 404, never []);
    returns its ``vectors_indexed``: whether its memories and knowledge are in the HNSW index."""
    return bool((await live_anima_values(session, org_id, anima_id, col(Anima.vectors_indexed)))[0])


async def newest_first(
    session: AsyncSession,
    org_id: uuid.UUID,
    anima_id: uuid.UUID | None,
    stmt: Any,
    table: Any,
    at: Any,
    limit: int,
    cursor: str | None,
) -> tuple[list[Any], str | None]:
    """One keyset page of ``stmt``, newest ``at`` first, of one anima of the org if given."""
    if anima_id is not None:
        await check_anima(session, org_id, anima_id)
        stmt = stmt.where(table.c.anima_id == anima_id)
    return await keyset_page(
        session, stmt, at=at, row_id=table.c.id, limit=limit, cursor=cursor, direction=Direction.DESC
    )


# pgvector >= 0.8: keep scanning the HNSW graph until LIMIT rows pass the query's filters.
_ITERATIVE_SCAN = text("SET LOCAL hnsw.iterative_scan = relaxed_order")


async def nearest(
    session: AsyncSession,
    org_id: uuid.UUID,
    anima_id: uuid.UUID,
    table: Any,
    columns: Sequence[Any],
    vector: Sequence[float],
    limit: int,
    min_similarity: float | None,
    space: int | None,
    *filters: Any,
    source: Any = None,
) -> list[tuple[Any, float]]:
    """Rows of one anima nearest ``vector`` by cosine similarity, best first, with ``filters``.

    Only vectors of ``space`` (the query vector's) are compared. A large anima's rows are found
    through the width's HNSW index (its predicate names ``vector_indexed``); a small one's are
    compared exactly."""
    indexed = await check_anima(session, org_id, anima_id)
    await session.execute(_ITERATIVE_SCAN)
    key, same_width = indexed_vector(table.c.embedding, len(vector))
    distance = key.cosine_distance(list(vector))
    stmt = (
        select(*columns, (1 - distance).label("similarity"))
        .select_from(table if source is None else source)
        .where(*visible(table, org_id), table.c.anima_id == anima_id, same_width, table.c.embedding_space == space)
        .where(*filters, vector_rows(table, indexed))
        .order_by(distance, table.c.id)
        .limit(limit)
    )
    if min_similarity is not None:
        stmt = stmt.where(distance <= 1 - min_similarity)
    return [(row, float(row.similarity)) for row in (await session.execute(stmt)).all()]


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
    if type_ is not None:
        stmt = stmt.where(_K.c.type == type_)
    if topic is not None:
        stmt = stmt.where(_K.c.topic == topic)
    if not include_superseded:
        stmt = stmt.where(_K.c.valid_to.is_(None))
    return await newest_first(session, org_id, anima_id, stmt, _K, _K.c.created_at, limit, cursor)


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
    km, m = table_of(KnowledgeMemory), table_of(Memory)
    links = await session.execute(
        select(km.c.knowledge_id, km.c.memory_id, m.c.event_ids)
        .outerjoin(m, (m.c.id == km.c.memory_id) & org_scoped(m, org_id))
        .where(km.c.knowledge_id.in_(list(knowledge_ids)), org_scoped(km, org_id))
        .order_by(km.c.knowledge_id, km.c.memory_id)
    )
    events: dict[uuid.UUID, set[uuid.UUID]] = {k: set() for k in knowledge_ids}
    for kid, mid, eids in links.all():
        out[kid][0].append(mid)
        events[kid].update(eids or ())
    for kid, (_, eids) in out.items():
        eids.extend(sorted(events[kid]))
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
    """Nearest knowledge of one anima by cosine similarity, best first (current items by default)."""
    current = () if include_superseded else (_K.c.valid_to.is_(None),)
    return await nearest(session, org_id, anima_id, _K, _K_COLS, vector, limit, min_similarity, space, *current)


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
    if status is not None:
        stmt = stmt.where(_R.c.status == status)
    return await newest_first(session, org_id, anima_id, stmt, _R, _R.c.started_at, limit, cursor)


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
