"""Everything a compile reads: a handful of statements in one REPEATABLE READ transaction.

The compile holds the transaction until it has packed and read the served items' provenance
(:mod:`.provenance`) from the same snapshot. One snapshot means the ``state_version`` read first keys exactly the state the candidates come
from. (Splitting the reads over two connections sharing an exported snapshot was measured: on
2 cores it saved ~3 ms of ~30, and holding one pooled connection while waiting for a second can
deadlock a saturated pool, so it was not kept.)
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from elephantasm.domain.errors import NotFoundError
from elephantasm.domain.presets import candidate_limits
from elephantasm.domain.render import Layer
from elephantasm.services.packs import candidates as cands
from elephantasm.services.packs.keys import PackRequest
from elephantasm.services.packs.session import SessionScope, resolve_session

if TYPE_CHECKING:
    from elephantasm.runtime import Runtime


# Per transaction: a wide enough HNSW beam, pgvector 0.8's iterative scan so the anima filter
# cannot starve the top-k, and no parallel workers: their start-up costs more than the short
# index ranges they would split (measured 22 ms vs 9.5 ms for the long-term statement at 100k
# memories on 2 cores). Plans stay on Postgres's default (custom first, generic once it is no
# worse): forcing custom plans cost ~2 ms of planning per statement.
_SETTINGS = (
    "set_config('hnsw.ef_search', :ef, true), set_config('hnsw.iterative_scan', 'relaxed_order', true), "
    "set_config('max_parallel_workers_per_gather', '0', true)"
)
# The first statement of the transaction sets them and reads the anima's head row: one round trip.
# (The settings take effect for the statements after it; this one needs none of them.)
_HEAD_SQL = text(f"""
SELECT a.name, a.description, a.state_version, a.last_event_at,
       (SELECT e.session_id FROM events e WHERE e.anima_key = a.key AND e.org_id = a.org_id AND e.anima_id = a.id
        ORDER BY e.occurred_at DESC, e.id DESC LIMIT 1) AS latest_session,
       i.id AS identity_id, i.personality_type, i.communication_style, i.self, i.prose
FROM (SELECT {_SETTINGS}) settings, animas a LEFT JOIN identities i ON i.anima_id = a.id
WHERE a.id = :anima AND a.org_id = :org AND a.deleted_at IS NULL
""")


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
async def snapshot_transaction(runtime: Runtime) -> AsyncIterator[AsyncConnection]:
    """One read-only REPEATABLE READ transaction: every read of a compile sees the same snapshot."""
    async with runtime.engine.connect() as conn:
        conn = await conn.execution_options(isolation_level="REPEATABLE READ", postgresql_readonly=True)
        async with conn.begin():
            yield conn


_OWN_SESSION_EVENTS = 500


async def read_candidates(conn: AsyncConnection, req: PackRequest, scope: cands.Scope) -> Gathered:
    """Anima, session, the session's candidates, long-term memories and pending events (minus the
    session's), and knowledge, on ``conn`` (a :func:`snapshot_transaction`, the compile's first
    reads). Provenance is read later, for the items served (:mod:`.provenance`). NotFoundError for
    a missing or foreign anima."""
    cfg = req.config
    limits = candidate_limits(cfg, req.max_tokens, req.query is not None)
    ef = str(min(1000, max(64, 2 * pool_size(max(limits.long_term, limits.knowledge)))))
    head = (await conn.execute(_HEAD_SQL, {"ef": ef, "anima": req.anima_id, "org": req.org_id})).one_or_none()
    if head is None:
        raise NotFoundError(f"anima {req.anima_id} not found")
    session = await resolve_session(
        conn,
        req.org_id,
        req.anima_id,
        explicit=req.session_id,
        latest_session=head.latest_session,
        last_event_at=head.last_event_at,
        as_of=req.as_of,
        config=cfg,
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
    if cfg.include_long_term and (k := pool_size(limits.long_term)):
        layers[Layer.LONG_TERM] += await cands.long_term_memories(conn, scope, k, in_session)
        layers[Layer.LONG_TERM] += await cands.pending_events(conn, scope, k, in_session)
    memory_ids = [c.id for layer in (Layer.SESSION, Layer.LONG_TERM) for c in layers[layer] if c.kind == "memory"]
    if stale := await cands.superseded_memories(conn, scope, memory_ids):
        for layer in (Layer.SESSION, Layer.LONG_TERM):
            layers[layer] = [c for c in layers[layer] if not (c.kind == "memory" and c.id in stale)]
    if cfg.include_knowledge and (k := pool_size(limits.knowledge)):
        layers[Layer.KNOWLEDGE] = await cands.knowledge(conn, scope, k)
    return Gathered(head, session, layers)
