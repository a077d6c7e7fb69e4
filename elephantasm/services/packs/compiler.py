"""Compile one memory pack: read candidates in one consistent snapshot, score, pack, render, serialise.

A pack is a pure function of (anima state, query, config, max_tokens, encoding, session, as_of
bucket): every read happens in one REPEATABLE READ transaction whose ``state_version`` keys the
result, time-based factors use the one quantised ``as_of``, and the pack id derives from the
fingerprint, so the same inputs give byte-identical content.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from elephantasm.domain.errors import NotFoundError
from elephantasm.domain.fingerprint import pack_fingerprint
from elephantasm.domain.packing import PackResult, pack
from elephantasm.domain.presets import adapt_weights
from elephantasm.domain.render import RENDER_ORDER, Layer, header_line, item_line
from elephantasm.domain.temporal import temporal_context
from elephantasm.services.packs import candidates as cands
from elephantasm.services.packs.items import IdentityData, Scorer, identity_items, temporal_item
from elephantasm.services.packs.keys import PackRequest, pack_key_inputs, snapshot_key
from elephantasm.services.packs.session import SessionScope, resolve_session
from elephantasm.services.packs.wire import build_pack
from elephantasm.schemas.packs import MemoryPackRead
from elephantasm.tokens import get_token_counter

if TYPE_CHECKING:
    from elephantasm.runtime import Runtime

# Ids are derived from fingerprints so a recompiled pack keeps its id (uuid5 in a fixed namespace).
PACK_ID_NAMESPACE = uuid.UUID("6f1c9a52-3a57-4f0e-9d55-1c3e1f1b7a00")

_ANIMA_SQL = text("""
SELECT a.name, a.description, a.state_version, a.last_event_at,
       (SELECT e.session_id FROM events e WHERE e.org_id = a.org_id AND e.anima_id = a.id
        ORDER BY e.occurred_at DESC, e.id DESC LIMIT 1) AS latest_session,
       i.id AS identity_id, i.personality_type, i.communication_style, i.self, i.prose
FROM animas a LEFT JOIN identities i ON i.anima_id = a.id
WHERE a.id = :anima AND a.org_id = :org AND a.deleted_at IS NULL
""")
# Per transaction: a wide enough HNSW beam, pgvector 0.8's iterative scan so the anima filter
# cannot starve the top-k, and custom plans so a small anima in a big table gets an exact scan.
_SEARCH_SQL = text(
    "SELECT set_config('hnsw.ef_search', :ef, true), set_config('hnsw.iterative_scan', 'relaxed_order', true), "
    "set_config('plan_cache_mode', 'force_custom_plan', true)"
)


@dataclass(frozen=True, slots=True)
class CompiledPack:
    """A serialised pack and what serving and persisting it need."""

    key: str
    fingerprint: str
    pack_id: uuid.UUID
    state_version: int
    body: bytes
    memory_ids: tuple[uuid.UUID, ...]
    pack: MemoryPackRead


@dataclass(slots=True)
class _Gathered:
    head: Any
    session: SessionScope | None
    layers: dict[Layer, list[cands.Candidate]]


def pool_size(limit: int) -> int:
    """Rows each top-k arm reads for a layer limit: headroom for items the budget skips."""
    return 0 if limit <= 0 else max(2 * limit, limit + 10)


def _vector_literal(vector: list[float]) -> str:
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


async def _gather(conn: AsyncConnection, req: PackRequest, scope: cands.Scope) -> _Gathered:
    cfg, limits = req.config, req.config.limits
    head = (await conn.execute(_ANIMA_SQL, {"anima": req.anima_id, "org": req.org_id})).one_or_none()
    if head is None:
        raise NotFoundError(f"anima {req.anima_id} not found")
    session = await resolve_session(
        conn, req.org_id, req.anima_id, explicit=req.session_id, latest_session=head.latest_session,
        last_event_at=head.last_event_at, as_of=req.as_of, config=cfg,
    )
    layers: dict[Layer, list[cands.Candidate]] = {Layer.SESSION: [], Layer.LONG_TERM: [], Layer.KNOWLEDGE: []}
    if session is not None and cfg.include_session:
        layers[Layer.SESSION] += await cands.session_memories(conn, scope, session, pool_size(limits.session))
        if limits.recent_turns > 0:
            layers[Layer.SESSION] += await cands.recent_turns(conn, scope, session, limits.recent_turns)
    in_session = [c.id for c in layers[Layer.SESSION]]
    if cfg.include_long_term and (k := pool_size(limits.long_term)):
        layers[Layer.LONG_TERM] += await cands.long_term_memories(conn, scope, k, in_session)
        layers[Layer.LONG_TERM] += await cands.pending_events(conn, scope, k, in_session)
    if cfg.include_knowledge and (k := pool_size(limits.knowledge)):
        layers[Layer.KNOWLEDGE] = await cands.knowledge(conn, scope, k)
    return _Gathered(head, session, layers)


async def _read(runtime: Runtime, req: PackRequest, scope: cands.Scope) -> _Gathered:
    async with runtime.engine.connect() as conn:
        conn = await conn.execution_options(isolation_level="REPEATABLE READ", postgresql_readonly=True)
        async with conn.begin():
            if scope.has_query:
                ef = min(1000, max(64, 2 * pool_size(req.config.limits.long_term)))
                await conn.execute(_SEARCH_SQL, {"ef": str(ef)})
            return await _gather(conn, req, scope)


async def _event_cosines(runtime: Runtime, query_vec: list[float], items: list[cands.Candidate]) -> list[cands.Candidate]:
    """Events carry no stored embedding: embed the (bounded) candidate set now."""
    events = [c for c in items if c.kind == "event"]
    if not events:
        return items
    vectors = await runtime.embedder.embed([c.text for c in events])
    cos = {c.id: sum(a * b for a, b in zip(query_vec, v, strict=True)) for c, v in zip(events, vectors, strict=True)}
    return [replace(c, cosine=cos[c.id]) if c.id in cos else c for c in items]


def _identity(head: Any) -> IdentityData:
    return IdentityData(
        name=head.name, description=head.description, personality_type=head.personality_type,
        communication_style=head.communication_style, self_reflection=head.self or None, prose=head.prose,
    )


def layer_tokens(result: PackResult, count: Any) -> dict[str, int]:
    """Tokens of each layer's block (header and lines), for the CLI's table and the wire."""
    return {
        layer.value: count(header_line(layer) + "".join(item_line(layer, it) for it in result.items(layer)))
        if result.items(layer) else 0
        for layer in RENDER_ORDER
    }


async def compile_pack(runtime: Runtime, req: PackRequest) -> CompiledPack:
    """Compile ``req`` now (no cache). Raises NotFoundError for a missing or foreign anima."""
    cfg = req.config
    weights = adapt_weights(cfg.weights, req.query) if cfg.adaptive else cfg.weights
    query_vec = (await runtime.embedder.embed([req.query]))[0] if req.query else None
    scope = cands.Scope(req.org_id, req.anima_id, req.as_of, req.query,
                        _vector_literal(query_vec) if query_vec else None, weights, cfg)
    got = await _read(runtime, req, scope)
    if query_vec is not None:
        for layer in (Layer.SESSION, Layer.LONG_TERM):
            got.layers[layer] = await _event_cosines(runtime, query_vec, got.layers[layer])
    scorer = Scorer(cfg, weights, req.query is not None, req.as_of)
    identity = _identity(got.head)
    temporal = temporal_context(got.head.last_event_at, req.as_of)
    items = {layer: [scorer.item(c) for c in got.layers.get(layer, [])] for layer in RENDER_ORDER}
    if cfg.include_identity:
        items[Layer.IDENTITY] = identity_items(identity)
    if cfg.include_temporal and got.head.last_event_at is not None:
        items[Layer.TEMPORAL] = [temporal_item(temporal)]
    count = get_token_counter(req.encoding)
    result = pack(items, max_tokens=req.max_tokens, count=count, shares=cfg.shares.as_mapping(),
                  limits=cfg.limits.as_mapping(), min_score=cfg.min_score or None)
    inputs = pack_key_inputs(req, got.head.state_version)
    fingerprint = pack_fingerprint(inputs, result.text)
    pack_id = uuid.uuid5(PACK_ID_NAMESPACE, fingerprint)
    wire = build_pack(
        req, result, scorer, pack_id=pack_id, fingerprint=fingerprint, state_version=got.head.state_version,
        identity=identity if cfg.include_identity else None,
        temporal=temporal if got.head.last_event_at is not None and cfg.include_temporal else None,
        session_id=got.session.session_id if got.session else None,
        layer_tokens=layer_tokens(result, count), compiled_at=runtime.clock(),
    )
    memory_ids = tuple(
        uuid.UUID(it.id) for layer in (Layer.SESSION, Layer.LONG_TERM) for it in result.items(layer)
        if it.ref[0].kind == "memory"
    )
    return CompiledPack(
        key=snapshot_key(inputs), fingerprint=fingerprint, pack_id=pack_id, state_version=got.head.state_version,
        body=wire.model_dump_json().encode(), memory_ids=memory_ids, pack=wire,
    )
