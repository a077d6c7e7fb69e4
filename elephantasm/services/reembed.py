"""Re-embedding the stored vectors of another space than the server's (after a change of embedder
they keep full-text relevance but lose cosine). Safe while serving and resumable: batches are read
with no transaction open while the embedder works, then written in one short transaction under the
anima's dreamer lock, only where the text is unchanged and the row still stale, bumping
``state_version``.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from elephantasm.db.engine import SessionFactory
from elephantasm.db.tables import rowcount
from elephantasm.db.vectors import vector_literal
from elephantasm.domain.lean import lean_text
from elephantasm.llm.embedders import Embedder
from elephantasm.services.animas import bump_state_version
from elephantasm.services.dreams.claims import lock_anima

# (table, column the vector is made from). Both tables are indexed on embedding_space. A memory's
# vector is made from its summary without filler (lean_text), as the dreamer makes it.
TABLES = (("memories", "summary"), ("knowledge", "content"))

# "Stale": a vector of another space, or one made before spaces were recorded (NULL). Written as
# three index ranges (not ``<>``) so the partial embedding_space index answers it without a scan.
_STALE = "embedding IS NOT NULL AND (embedding_space IS NULL OR embedding_space < :space OR embedding_space > :space)"
_ANIMA = "(CAST(:anima AS uuid) IS NULL OR anima_id = :anima)"

Progress = Callable[[int, int], None]
"""Called with (rows re-embedded so far, rows stale when the run started)."""


@dataclass(frozen=True, slots=True)
class ReembedResult:
    """What a re-embed run did: rows moved to the current space, rows still stale (changed meanwhile)."""

    space: str
    done: int
    remaining: int


async def stale_counts(session: AsyncSession, space: int, anima_id: uuid.UUID | None = None) -> dict[str, int]:
    """Rows per table whose vector is not in the space ``space`` (all animas, or one)."""
    params = {"space": space, "anima": anima_id}
    out: dict[str, int] = {}
    for table, _ in TABLES:
        stmt = text(f"SELECT count(*) FROM {table} WHERE {_STALE} AND {_ANIMA}")
        out[table] = int((await session.execute(stmt, params)).scalar_one())
    return out


_PENDING_SQL = text(
    "SELECT EXISTS (SELECT 1 FROM memories WHERE " + _STALE + ") "
    "OR EXISTS (SELECT 1 FROM knowledge WHERE " + _STALE + ")"
)


async def any_stale(session: AsyncSession, space: int) -> bool:
    """Whether any stored vector is in another space than ``space`` (index-backed)."""
    return bool((await session.execute(_PENDING_SQL, {"space": space})).scalar())


def _select_sql(table: str, column: str) -> str:
    # Keyset pages in (anima_id, id) order: one anima at a time, each row visited once per run.
    return (
        f"SELECT id, anima_id, {column} AS body FROM {table} WHERE {_STALE} AND {_ANIMA} "
        "AND (anima_id, id) > (CAST(:after_anima AS uuid), CAST(:after_id AS uuid)) "
        "ORDER BY anima_id, id LIMIT :limit"
    )


def _update_sql(table: str, column: str) -> str:
    # A memory's turn vectors were made in its old space: dropped (relevance uses the summary alone).
    turns = ", turn_vectors = NULL" if table == "memories" else ""
    return (
        f"UPDATE {table} t SET embedding = CAST(u.v AS halfvec), embedding_space = :space{turns} "
        "FROM unnest(CAST(:ids AS uuid[]), CAST(:bodies AS text[]), CAST(:vecs AS text[])) AS u(id, body, v) "
        f"WHERE t.id = u.id AND t.{column} = u.body AND t.embedding IS NOT NULL "
        "AND t.embedding_space IS DISTINCT FROM :space"
    )


_ZERO = uuid.UUID(int=0)


async def _write_batch(
    units: SessionFactory, space: int, table: str, column: str, anima: uuid.UUID, rows: list, vectors: list
) -> int:
    params = {
        "space": space,
        "ids": [r.id for r in rows],
        "bodies": [r.body for r in rows],
        "vecs": [vector_literal(v) for v in vectors],
    }
    async with units() as session:
        await lock_anima(session, anima)  # never interleaves with a dream's chunk write for the anima
        done = rowcount(await session.execute(text(_update_sql(table, column)), params))
        if done:
            await bump_state_version(session, [anima])
    return int(done)


async def _pages(
    units: SessionFactory,
    embedder: Embedder,
    space: int,
    table: str,
    column: str,
    anima_id: uuid.UUID | None,
    batch: int,
) -> AsyncIterator[tuple[int, int]]:
    """Re-embed ``table``'s stale rows page by page; yields (rows read, rows re-embedded) per page."""
    select_sql = text(_select_sql(table, column))
    prepare = lean_text if table == "memories" else str
    after = (_ZERO, _ZERO)
    while True:
        params = {"space": space, "anima": anima_id, "after_anima": after[0], "after_id": after[1], "limit": batch}
        async with units() as session:
            rows = list(await session.execute(select_sql, params))
        if not rows:
            return
        after = (rows[-1].anima_id, rows[-1].id)
        vectors = await embedder.embed([prepare(r.body or "") for r in rows])
        done = 0
        # A page may span animas: write each anima's part under that anima's lock.
        for anima in dict.fromkeys(r.anima_id for r in rows):
            part = [(r, v) for r, v in zip(rows, vectors, strict=True) if r.anima_id == anima]
            done += await _write_batch(units, space, table, column, anima, [r for r, _ in part], [v for _, v in part])
        yield len(rows), done


async def reembed(
    units: SessionFactory,
    embedder: Embedder,
    space: int,
    anima_id: uuid.UUID | None = None,
    *,
    batch: int,
    progress: Progress | None = None,
) -> ReembedResult:
    """Re-embed every stale vector (of one anima, or all) into ``space``, the code of ``embedder``'s
    space, ``batch`` rows per committed unit of work."""

    async def stale() -> int:
        async with units() as session:
            return sum((await stale_counts(session, space, anima_id)).values())

    total, seen, done = await stale(), 0, 0
    if progress:
        progress(0, total)
    for table, column in TABLES:
        async for read, written in _pages(units, embedder, space, table, column, anima_id, batch):
            seen, done = seen + read, done + written
            if progress:
                progress(min(seen, total), total)
    return ReembedResult(embedder.space.label(), done, await stale())
