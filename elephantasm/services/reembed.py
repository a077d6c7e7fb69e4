"""Embedding spaces: which stored vectors are in another space than the server's, and re-embedding them.

A vector is compared only with vectors of its own space (``embedding_space`` = the code of the
embedder's ``EmbeddingSpace.label()``, ``services.spaces``). After a change
of embedder, rows of the old space keep their full-text relevance and lose their cosine until
:func:`reembed` has moved them.

Re-embedding is safe while serving and resumable: rows are read in small batches (no
transaction open while the embedder works), then each batch is written in one short transaction
under the anima's dreamer lock, only where the text is unchanged and the row is still stale,
with the anima's ``state_version`` bumped so cached packs miss. Interrupted, it simply continues
with the rows still stale on the next run.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import text

from elephantasm.db.tables import rowcount
from elephantasm.db.vectors import vector_literal
from elephantasm.domain.lean import lean_text
from elephantasm.services.animas import bump_state_version
from elephantasm.services.dreams.claims import lock_anima
from elephantasm.services.spaces import current_space

if TYPE_CHECKING:
    from elephantasm.runtime import Runtime

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


async def stale_counts(runtime: Runtime, anima_id: uuid.UUID | None = None) -> dict[str, int]:
    """Rows per table whose vector is not in the server's space (all animas, or one)."""
    params = {"space": await current_space(runtime), "anima": anima_id}
    out: dict[str, int] = {}
    async with runtime.engine.connect() as conn:
        for table, _ in TABLES:
            stmt = text(f"SELECT count(*) FROM {table} WHERE {_STALE} AND {_ANIMA}")
            out[table] = int((await conn.execute(stmt, params)).scalar_one())
    return out


_PENDING_SQL = text(
    "SELECT EXISTS (SELECT 1 FROM memories WHERE " + _STALE + ") "
    "OR EXISTS (SELECT 1 FROM knowledge WHERE " + _STALE + ")"
)


# How long /api/health reuses the answer: a health probe must stay cheap whatever the data (the
# check is index-backed, but a planner working from stale statistics after a bulk load was seen to
# scan every vector: 77 ms at 100k memories), and the answer only changes when an embedder changes
# or a re-embedding (often another process) finishes.
PENDING_TTL_SECONDS = 30.0
_PENDING_FACT = "reembed_pending"


async def reembed_pending(runtime: Runtime, max_age: float = PENDING_TTL_SECONDS) -> bool:
    """Whether any stored vector is in another space (``/api/health`` reports it; at most
    ``max_age`` seconds old: a re-embedding run of this process refreshes it at once)."""
    now = time.monotonic()
    known = runtime.slow_facts.get(_PENDING_FACT)
    if known is not None and now - known[0] < max_age:
        return bool(known[1])
    space = await current_space(runtime)
    async with runtime.engine.connect() as conn:
        pending = bool((await conn.execute(_PENDING_SQL, {"space": space})).scalar())
    runtime.slow_facts[_PENDING_FACT] = (now, pending)
    return pending


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


async def _write_batch(runtime: Runtime, table: str, column: str, anima: uuid.UUID, rows: list, vectors: list) -> int:
    params = {
        "space": await current_space(runtime),
        "ids": [r.id for r in rows],
        "bodies": [r.body for r in rows],
        "vecs": [vector_literal(v) for v in vectors],
    }
    async with runtime.unit_of_work() as session:
        await lock_anima(session, anima)  # never interleaves with a dream's chunk write for the anima
        done = rowcount(await session.execute(text(_update_sql(table, column)), params))
        if done:
            await bump_state_version(session, [anima])
    return int(done)


async def _reembed_table(
    runtime: Runtime, table: str, column: str, anima_id: uuid.UUID | None, batch: int, tick: Callable[[int], None]
) -> int:
    select_sql = text(_select_sql(table, column))
    after, done = (_ZERO, _ZERO), 0
    while True:
        params = {
            "space": await current_space(runtime),
            "anima": anima_id,
            "after_anima": after[0],
            "after_id": after[1],
            "limit": batch,
        }
        async with runtime.engine.connect() as conn:
            rows = list(await conn.execute(select_sql, params))
        if not rows:
            return done
        after = (rows[-1].anima_id, rows[-1].id)
        prepare = lean_text if table == "memories" else str
        vectors = await runtime.embedder.embed([prepare(r.body or "") for r in rows])
        # A page may span animas: write each anima's part under that anima's lock.
        for anima in dict.fromkeys(r.anima_id for r in rows):
            part = [(r, v) for r, v in zip(rows, vectors, strict=True) if r.anima_id == anima]
            n = await _write_batch(runtime, table, column, anima, [r for r, _ in part], [v for _, v in part])
            done += n
        tick(len(rows))


async def reembed(
    runtime: Runtime, anima_id: uuid.UUID | None = None, *, batch: int | None = None, progress: Progress | None = None
) -> ReembedResult:
    """Re-embed every stale vector (of one anima, or all) into the server's space, batch by batch."""
    batch = batch or runtime.settings.reembed_batch
    total = sum((await stale_counts(runtime, anima_id)).values())
    seen = 0

    def tick(n: int) -> None:
        nonlocal seen
        seen += n
        if progress:
            progress(min(seen, total), total)

    if progress:
        progress(0, total)
    done = 0
    for table, column in TABLES:
        done += await _reembed_table(runtime, table, column, anima_id, batch, tick)
    remaining = sum((await stale_counts(runtime, anima_id)).values())
    runtime.slow_facts.pop(_PENDING_FACT, None)  # this run changed the answer: learn it afresh
    return ReembedResult(runtime.embedder.space.label(), done, remaining)
