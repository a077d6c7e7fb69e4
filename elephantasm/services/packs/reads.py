"""Everything a compile reads: a handful of statements in one REPEATABLE READ transaction.

The compile holds the transaction until it has packed and read the served items' provenance
(:mod:`.provenance`) from the same snapshot, so the ``state_version`` read first keys exactly the
state the candidates come from.

Knowledge and the pending events do not depend on the long-term memories statement (the slowest),
so they may be read meanwhile on a second connection that imports the compile's snapshot
(``pg_export_snapshot``/``SET TRANSACTION SNAPSHOT``): the two statements' Postgres work overlaps.
Only when no other compile of the process is reading (else there is no idle core to overlap on, and
the set-up costs Postgres CPU) and the pool has a connection to spare without waiting (waiting while
holding one could deadlock a saturated pool); otherwise everything is read on the first, same result.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from elephantasm.db.size_switches import event_rows_sql
from elephantasm.domain.errors import NotFoundError
from elephantasm.domain.presets import candidate_limits
from elephantasm.domain.render import Layer
from elephantasm.services.packs import candidates as cands
from elephantasm.services.packs.keys import PackRequest
from elephantasm.services.packs.session import SessionScope, resolve_session


# Per transaction: a wide enough HNSW beam, pgvector 0.8's iterative scan so the anima filter
# cannot starve the top-k, and no parallel workers: their start-up costs more than the short
# index ranges they would split (measured 22 ms vs 9.5 ms for the long-term statement at 100k
# memories on 2 cores). Plans stay on Postgres's default (custom first, generic once it is no
# worse): forcing custom plans cost ~2 ms of planning per statement.
def _settings(ef: str) -> str:
    return (
        f"set_config('hnsw.ef_search', {ef}, true), set_config('hnsw.iterative_scan', 'relaxed_order', true), "
        "set_config('max_parallel_workers_per_gather', '0', true)"
    )


# The session of the anima's latest event. CASE runs only the branch the anima's flag picks: a large
# anima's reads the time index (the predicate lets the planner use the partial index), a small
# anima's sorts its few rows read by seq (they are not in that index: elephantasm/db/size_switches.py).
_LATEST = (
    "(SELECT e.session_id FROM events e WHERE e.anima_key = a.key{} ORDER BY e.occurred_at DESC, e.id DESC LIMIT 1)"
)
_LATEST_SESSION = (
    f"CASE WHEN a.events_indexed THEN {_LATEST.format(event_rows_sql('e', True))} ELSE {_LATEST.format('')} END"
)


# The first statement of the transaction sets them and reads the anima's head row: one round trip.
# (The settings take effect for the statements after it; this one needs none of them.) With
# ``snapshot``, it also exports the transaction's snapshot for a second connection (it is the
# first statement, so that is the snapshot every later statement of the transaction reads).
def _head_sql(snapshot: bool) -> str:
    return f"""
SELECT a.name, a.description, a.state_version, a.last_event_at, a.vectors_indexed,
       a.events_indexed, {_LATEST_SESSION} AS latest_session,
       i.id AS identity_id, i.personality_type, i.communication_style, i.self, i.prose,
       {"pg_export_snapshot()" if snapshot else "NULL::text"} AS snapshot
FROM (SELECT {_settings(":ef")}) settings, animas a LEFT JOIN identities i ON i.anima_id = a.id
WHERE a.id = :anima AND a.org_id = :org AND a.deleted_at IS NULL
"""


_HEAD_SQL = {snapshot: text(_head_sql(snapshot)) for snapshot in (False, True)}
# What pg_export_snapshot() returns (hex virtual transaction id, a counter): checked before it is
# written into the second connection's SET TRANSACTION SNAPSHOT, which takes no bind parameter.
_SNAPSHOT_ID = re.compile(r"[0-9A-F]+-[0-9A-F]+-[0-9]+")


@dataclass(slots=True)
class Gathered:
    """The anima's head row, its current session, and candidates per layer."""

    head: Any
    session: SessionScope | None
    layers: dict[Layer, list[cands.Candidate]]


def pool_size(limit: int) -> int:
    """Rows each top-k arm reads for a layer limit: headroom for items the budget skips.

    A quarter on top (at least 10): limits grow with the budget (50 at 4,000 tokens), and doubling
    them made every arm and the HNSW ``ef_search`` twice as wide for items the packer rarely reaches.
    """
    return 0 if limit <= 0 else limit + max(10, limit // 4)


@asynccontextmanager
async def snapshot_transaction(engine: AsyncEngine) -> AsyncIterator[AsyncConnection]:
    """One read-only REPEATABLE READ transaction: every read of a compile sees the same snapshot."""
    async with engine.connect() as conn:
        conn = await conn.execution_options(isolation_level="REPEATABLE READ", postgresql_readonly=True)
        async with conn.begin():
            yield conn


def spare_connection(engine: AsyncEngine | None) -> bool:
    """Whether ``engine``'s pool can hand out one more connection without waiting: fewer are checked
    out than its core size (so neither an overflow connection nor a wait is needed for it)."""
    pool = engine.pool if engine is not None else None
    checkedout, size = getattr(pool, "checkedout", None), getattr(pool, "size", None)
    return checkedout is not None and size is not None and checkedout() < size()


@asynccontextmanager
async def snapshot_reader(engine: AsyncEngine, snapshot: str, ef: str) -> AsyncIterator[AsyncConnection]:
    """A second read-only REPEATABLE READ transaction on the snapshot ``snapshot`` (exported by the
    compile's transaction, which must stay open meanwhile), with the same planner settings.

    The driver's transaction is begun and ended here in one round trip each; SQLAlchemy's
    ``begin()`` only marks the connection as inside one, so :func:`~elephantasm.db.driver_fetch.fetch`
    runs on it as it is (it sends nothing itself: the asyncpg adapter begins lazily, and its
    commit/rollback are no-ops while it has not).
    """
    if not _SNAPSHOT_ID.fullmatch(snapshot) or not ef.isdigit():
        raise ValueError(f"not a snapshot id / ef_search: {snapshot!r} / {ef!r}")
    async with engine.connect() as conn, conn.begin():
        driver = (await conn.get_raw_connection()).driver_connection
        assert driver is not None  # a checked-out connection always has one
        await driver.execute(
            "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; "
            f"SET TRANSACTION SNAPSHOT '{snapshot}'; SELECT {_settings(repr(ef))}"
        )
        try:
            yield conn
        finally:
            if driver.is_closed():
                await conn.invalidate()
            else:
                await driver.execute("ROLLBACK")


_OWN_SESSION_EVENTS = 500


class _Reading:
    """How many compiles of this process are reading candidates now (one event loop: no lock)."""

    active = 0


async def read_candidates(
    conn: AsyncConnection, req: PackRequest, scope: cands.Scope, engine: AsyncEngine | None = None
) -> Gathered:
    """Anima, session, the session's candidates, long-term memories and pending events (minus the
    session's), and knowledge, on ``conn`` (a :func:`snapshot_transaction`, the compile's first
    reads), and on a second connection of ``engine``'s pool sharing its snapshot when this is the
    process's only compile reading and a connection is spare (module doc). Provenance is read
    later, for the items served (:mod:`.provenance`). NotFoundError for a missing or foreign anima."""
    _Reading.active += 1
    try:
        return await _read(conn, req, scope, engine if _Reading.active == 1 else None)
    finally:
        _Reading.active -= 1


async def _read(conn: AsyncConnection, req: PackRequest, scope: cands.Scope, engine: AsyncEngine | None) -> Gathered:
    cfg = req.config
    limits = candidate_limits(cfg, req.max_tokens, req.query is not None)
    ef = str(min(1000, max(64, 2 * pool_size(max(limits.long_term, limits.knowledge)))))
    long_k = pool_size(limits.long_term) if cfg.include_long_term else 0
    knowledge_k = pool_size(limits.knowledge) if cfg.include_knowledge else 0
    fork = engine is not None and (long_k or knowledge_k) > 0 and spare_connection(engine)
    params = {"ef": ef, "anima": req.anima_id, "org": req.org_id}
    head = (await conn.execute(_HEAD_SQL[fork], params)).one_or_none()
    if head is None:
        raise NotFoundError(f"anima {req.anima_id} not found")
    # The memories' cosine arm: HNSW for a large anima, an exact scan of a small one's rows.
    scope = dataclasses.replace(scope, vectors_indexed=head.vectors_indexed)
    session = await resolve_session(
        conn,
        req.org_id,
        req.anima_id,
        explicit=req.session_id,
        latest_session=head.latest_session,
        last_event_at=head.last_event_at,
        as_of=req.as_of,
        config=cfg,
        events_indexed=head.events_indexed,
    )
    layers: dict[Layer, list[cands.Candidate]] = {Layer.SESSION: [], Layer.LONG_TERM: [], Layer.KNOWLEDGE: []}
    if session is not None and cfg.include_session:
        layers[Layer.SESSION] += await cands.session_memories(conn, scope, session, pool_size(limits.session))
        if limits.recent_turns > 0:
            layers[Layer.SESSION] += await cands.recent_turns(conn, scope, session, limits.recent_turns)
    in_session = [c.id for c in layers[Layer.SESSION]]
    if session is not None and req.session_id and not cfg.include_session:
        # A caller that names its session and leaves the layer out holds that session itself (a
        # chat's own turns): its pending events must not come back as long-term items either.
        in_session += [c.id for c in await cands.recent_turns(conn, scope, session, _OWN_SESSION_EVENTS)]
    snapshot = head.snapshot if fork else None
    await _long_term_and_others(conn, engine, snapshot, scope, (ef, long_k, knowledge_k), in_session, layers)
    return Gathered(head, session, layers)


async def _long_term_and_others(
    conn: AsyncConnection,
    engine: AsyncEngine | None,
    snapshot: str | None,
    scope: cands.Scope,
    sizes: tuple[str, int, int],
    in_session: list[uuid.UUID],
    layers: dict[Layer, list[cands.Candidate]],
) -> None:
    """Long-term memories (minus stale ones) on ``conn``; pending events and knowledge on a second
    connection of ``engine`` reading ``snapshot`` meanwhile, else on ``conn`` after them (module doc).
    ``sizes``: ``ef_search``, the long-term and the knowledge ``k``; ``layers`` is filled in place."""
    ef, long_k, knowledge_k = sizes

    async def others(on: AsyncConnection) -> tuple[list[cands.Candidate], list[cands.Candidate]]:
        # Knowledge and pending events: nothing they read depends on the long-term memories.
        pending = await cands.pending_events(on, scope, long_k, in_session) if long_k else []
        known = await cands.knowledge(on, scope, knowledge_k) if knowledge_k else []
        return pending, known

    async def on_second(engine: AsyncEngine, snapshot: str) -> tuple[list[cands.Candidate], list[cands.Candidate]]:
        async with snapshot_reader(engine, snapshot, ef) as second:
            return await others(second)

    side = asyncio.ensure_future(on_second(engine, snapshot)) if engine is not None and snapshot else None
    try:
        if long_k:
            layers[Layer.LONG_TERM] += await cands.long_term_memories(conn, scope, long_k, in_session)
        memory_ids = [c.id for layer in (Layer.SESSION, Layer.LONG_TERM) for c in layers[layer] if c.kind == "memory"]
        stale = await cands.superseded_memories(conn, scope, memory_ids)
    finally:
        if side is not None:
            # The second connection reads through this transaction's snapshot: it must be done
            # before the transaction can end, also when a read here failed.
            await asyncio.wait([side])
            if not side.cancelled():
                side.exception()  # retrieved (raised below) or dropped for the error raised here
    pending, known = side.result() if side is not None else await others(conn)
    layers[Layer.LONG_TERM] += pending
    if stale:
        for layer in (Layer.SESSION, Layer.LONG_TERM):
            layers[layer] = [c for c in layers[layer] if not (c.kind == "memory" and c.id in stale)]
    if knowledge_k:
        layers[Layer.KNOWLEDGE] = known
