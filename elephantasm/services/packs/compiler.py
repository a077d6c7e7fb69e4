"""Compile one memory pack: read candidates in one consistent snapshot, score, pack, render, serialise.

A pack is a pure function of (anima state, query, config, max_tokens, encoding, session, as_of
bucket): every read happens in one REPEATABLE READ transaction whose ``state_version`` keys the
result, time-based factors use the one quantised ``as_of``, and the pack id derives from the
fingerprint, so the same inputs give byte-identical content.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import text

from elephantasm.db.driver_fetch import fetch
from elephantasm.db.vectors import vector_literal
from elephantasm.domain import idf, turn_vectors
from elephantasm.domain.distinct import said_on_several_days
from elephantasm.domain.fingerprint import pack_fingerprint
from elephantasm.domain.fusion import rank_fusion
from elephantasm.domain.lean import lean_text, wants_dates, wants_temporal
from elephantasm.domain.pack_trace import Filtered, PackTrace
from elephantasm.domain.packing import PackResult, pack
from elephantasm.domain.presets import budget_limits, budget_shares, compile_weights
from elephantasm.domain.render import RENDER_ORDER, Layer
from elephantasm.domain.scoring import ScoringWeights, contextual_relevance
from elephantasm.domain.temporal import TemporalContext, temporal_context
from elephantasm.gcpause import paused_gc
from elephantasm.schemas.packs import MemoryPackRead
from elephantasm.services.packs import candidates as cands
from elephantasm.services.packs.items import IdentityData, Scorer, identity_items, temporal_item
from elephantasm.services.packs.keys import PackRequest, pack_key_inputs, snapshot_key
from elephantasm.services.packs.provenance import fill_provenance
from elephantasm.services.packs.reads import Gathered, read_candidates, snapshot_transaction
from elephantasm.services.packs.sql import QVEC
from elephantasm.services.packs.wire import build_pack, encode
from elephantasm.tokens import get_token_counter

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection

    from elephantasm.llm.embedders import Embedder
    from elephantasm.services.packs.deps import PackDeps

# Ids are derived from fingerprints so a recompiled pack keeps its id (uuid5 in a fixed namespace).
PACK_ID_NAMESPACE = uuid.UUID("6f1c9a52-3a57-4f0e-9d55-1c3e1f1b7a00")
# With a query, knowledge has to be about the question to earn its tokens: its in-compile relevance
# (0..1, the best candidate's 1) must reach this. (Measured on both quality datasets: no fact cited
# as evidence is left out; admitting the top 8 of either ranking instead let unrelated facts in.)
KNOWLEDGE_FLOOR = 0.4
# With a query, a long-term line said on several days (domain.distinct.said_on_several_days) is small
# talk unless its relevance reaches this or its importance IMPORTANT: it enters no pack, however much
# budget is left. A line said once is never cut this way: with an embedder that misses paraphrases a
# stated fact can look as unrelated as chatter. (Measured on both quality datasets: no evidence lost.)
HABIT_FLOOR = 0.5
IMPORTANT = 0.8
# With a query, a memory's prompt line is the turn that matched it best, when that line is at most
# this long: half a summary's tokens, the statement itself rather than the exchange's most
# "informative" sentences. (Measured: ER_any at 250 tokens +10 points; the wire keeps the summary.)
SNIPPET_CHARS = 400
# With a query, packs below this budget render only the identity's name line.
IDENTITY_FULL_TOKENS = 1000
# The cosine's share of relevance when the lexical side is BM25 (domain.idf); ts_rank, with no IDF,
# kept 0.15 (scoring.CONTEXT_COSINE_WEIGHT).
IDF_COSINE_WEIGHT = 0.7
_KNOWLEDGE_COSINES = text(
    f"SELECT id, 1 - (embedding <=> {QVEC}) AS cosine FROM knowledge WHERE id = ANY(:ids) AND embedding_space = :space"
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
    data: dict[str, Any]
    """The wire pack as plain data (``body`` is its JSON): what recording it reads."""

    @property
    def pack(self) -> MemoryPackRead:
        """The wire pack as a model, parsed from ``body`` (for the inspector and tests; serving
        and recording never need it)."""
        return MemoryPackRead.model_validate_json(self.body)


async def _event_cosines(
    embedder: Embedder, query_vec: list[float], items: list[cands.Candidate]
) -> list[cands.Candidate]:
    """Events carry no stored embedding: embed the (bounded) candidate set now (the embedder's LRU
    keeps them across compiles). Unit vectors: cosine is the dot product."""
    events = [c for c in items if c.kind == "event"]
    if not events:
        return items
    texts = [lean_text(c.text) for c in events]
    embed_array = getattr(embedder, "embed_array", None)
    if embed_array is not None:
        rows = await embed_array(texts)
    else:
        rows = np.array(await embedder.embed(texts), dtype=np.float64)
    for c, cosine in zip(events, (rows @ np.asarray(query_vec, dtype=np.float64)).tolist(), strict=True):
        c.cosine = cosine  # this compile's own candidate, read from its rows just now
    return items


async def _knowledge_cosines(
    conn: AsyncConnection, space: int | None, dense_vec: list[float], items: list[cands.Candidate]
) -> list[cands.Candidate]:
    """Knowledge compared with the masked query (:func:`_dense_query`), as turns and events are: else a
    fact naming whom the question names ("Lena plans to sell…" for "Lena's biggest fear?") looks related."""
    params = {"ids": [c.id for c in items if c.cosine is not None], "qv": vector_literal(dense_vec), "space": space}
    cosines = {r["id"]: r["cosine"] for r in await fetch(conn, _KNOWLEDGE_COSINES, params)}
    return [replace(c, cosine=cosines[c.id]) if c.id in cosines else c for c in items]


def _turn_cosines(query_vec: list[float], items: list[cands.Candidate]) -> list[cands.Candidate]:
    """A memory's cosine blends its summary's with its best stored turn's (domain.turn_vectors), and
    that turn's line becomes the memory's prompt line (the wire keeps the summary)."""
    if not any(c.turn_vectors for c in items):
        return items
    q = np.asarray(query_vec, dtype=np.float32)
    best = turn_vectors.best_turns(q, [c.turn_vectors for c in items])
    out = []
    for c, b in zip(items, best, strict=True):
        if b is None:
            out.append(c)
            continue
        line = b[1]
        # A turn of small talk only ("Thanks, Maya!") shows nothing: the summary stands instead.
        snippet = line if line is not None and len(line) <= SNIPPET_CHARS and lean_text(line) else None
        out.append(replace(c, cosine=turn_vectors.blend(c.cosine, b[0]), snippet=snippet))
    return out


def _identity(head: Any) -> IdentityData:
    return IdentityData(
        name=head.name,
        description=head.description,
        personality_type=head.personality_type,
        communication_style=head.communication_style,
        # The wire (and SDK 0.2.0) wants an object or null; anything else the column may hold is dropped.
        self_reflection=head.self if isinstance(head.self, dict) and head.self else None,
        prose=head.prose,
    )


def layer_tokens(result: PackResult) -> dict[str, int]:
    """Tokens of each layer's block (header and lines), for the CLI's table and the wire (0 for an
    empty layer); the packer counted them exactly (:func:`~elephantasm.domain.packing.rendered_tokens`)."""
    return {layer.value: result.layer_tokens.get(layer, 0) for layer in RENDER_ORDER}


async def compile_pack(deps: PackDeps, req: PackRequest, trace: PackTrace | None = None) -> CompiledPack:
    """Compile ``req`` now (no cache). Raises NotFoundError for a missing or foreign anima.

    ``trace`` (optional) receives the packer's decisions (the inspector's composer shows them).
    """
    query_vec = (await deps.embedder.embed([req.query]))[0] if req.query else None
    scope = cands.Scope(
        req.org_id,
        req.anima_id,
        req.as_of,
        req.query,
        vector_literal(query_vec) if query_vec else None,
        compile_weights(req.config, req.query),
        req.config,
        await deps.space() if query_vec else None,
        len(query_vec) if query_vec else None,
    )
    # One snapshot from the first read to the provenance of the served items. The pending events'
    # vectors come from the embedder's LRU (or, for new events, an in-process model); with a remote
    # embedder this read-only transaction (no locks beyond ACCESS SHARE) stays open during its call.
    async with snapshot_transaction(deps.engine) as conn:
        got = await read_candidates(conn, req, scope, deps.engine)
        lexical = _lexical(req, got)
        dense_vec = await _dense_query(deps.embedder, req, lexical, query_vec)
        if dense_vec is not None:
            for layer in (Layer.SESSION, Layer.LONG_TERM):
                got.layers[layer] = await _event_cosines(deps.embedder, dense_vec, got.layers[layer])
            if dense_vec is not query_vec:
                known = got.layers.get(Layer.KNOWLEDGE, [])
                got.layers[Layer.KNOWLEDGE] = await _knowledge_cosines(conn, scope.space, dense_vec, known)
        # Scoring/packing and serialising each build a few thousand short-lived objects: no cyclic
        # collection in the middle of either (elephantasm.gcpause). Each pause covers synchronous
        # code only: a pause held across an await would also hold the collector off for every
        # task that runs meanwhile, and under steady concurrent compiles it might never resume.
        with paused_gc():
            chosen = _choose(req, got, dense_vec, scope.weights, trace, lexical)
        await fill_provenance(conn, _needing_provenance(chosen.result, got, trace))
        _cite_echoes(chosen.result)
        with paused_gc():
            return _serialise(req, got, chosen, deps.clock())


@dataclass(frozen=True, slots=True)
class _Chosen:
    """What packing decided, and what the wire needs from it."""

    result: PackResult
    scorer: Scorer
    identity: IdentityData
    temporal: TemporalContext


def _lexical(req: PackRequest, got: Gathered) -> idf.Lexical | None:
    """BM25 of every candidate for the query, document frequencies over the candidates (domain.idf);
    None without a query or under the earlier formula (``minmax_ts_rank``)."""
    if req.query is None or req.config.relevance_fusion == "minmax_ts_rank":
        return None
    pool = [c for layer in RENDER_ORDER for c in got.layers.get(layer, [])]
    # Matched on the text the candidate would show (a memory's summary), never its exchange: that is
    # read only for some rows (turn vectors in this space, content stored), and a pack must not depend
    # on how a memory's content is kept. A candidate the full-text match ruled out (rank 0) holds no
    # query word and is not read.
    texts = [c.text for c in pool]
    matching = [c.fts_rank is None or c.fts_rank > 0.0 for c in pool]
    return idf.score(texts, idf.query_terms(req.query), matching)


async def _dense_query(
    embedder: Embedder, req: PackRequest, lexical: idf.Lexical | None, query_vec: list[float] | None
) -> list[float] | None:
    """The query vector the compile compares turns, events and knowledge with: the query embedded without its
    ubiquitous words (the participants' names, domain.idf), which would otherwise pull every short
    greeting that names them towards it; the plain query's vector when nothing is left out."""
    if query_vec is None or lexical is None or req.query is None:
        return query_vec
    masked = idf.masked_query(req.query, lexical.ubiquitous())
    if masked is None:
        return query_vec
    return (await embedder.embed([masked]))[0]


def _choose(
    req: PackRequest,
    got: Gathered,
    query_vec: list[float] | None,
    weights: ScoringWeights,
    trace: PackTrace | None,
    lexical: idf.Lexical | None = None,
) -> _Chosen:
    """Turn cosines, relevance, scores and packing, from the gathered candidates."""
    cfg = req.config
    if query_vec is not None:
        for layer in (Layer.SESSION, Layer.LONG_TERM):
            got.layers[layer] = _turn_cosines(query_vec, got.layers[layer])
    relevances = _relevances(cfg.relevance_fusion, got, trace, lexical) if req.query is not None else None
    scorer = Scorer(cfg, weights, req.query is not None, req.as_of, wants_dates(req.query))
    identity = _identity(got.head)
    temporal = temporal_context(got.head.last_event_at, req.as_of)
    items = {
        layer: scorer.items(got.layers.get(layer, []), relevances[layer] if relevances is not None else None)
        for layer in RENDER_ORDER
    }
    if cfg.include_identity:
        # With a query, a small pack keeps only the identity's name line: the rest answers nothing.
        brief = req.query is not None and req.max_tokens < IDENTITY_FULL_TOKENS
        items[Layer.IDENTITY] = identity_items(identity, brief=brief)
    if cfg.include_temporal and got.head.last_event_at is not None and wants_temporal(req.query):
        items[Layer.TEMPORAL] = [temporal_item(temporal)]
    shares = budget_shares(cfg, req.max_tokens, req.query is not None)
    result = pack(
        items,
        max_tokens=req.max_tokens,
        count=get_token_counter(req.encoding),
        shares=shares,
        limits=budget_limits(cfg, req.max_tokens, req.query is not None).as_mapping(),
        min_score=cfg.min_score or None,
        trace=trace,
        distinct=True,
    )
    return _Chosen(result, scorer, identity, temporal)


def _relevances(
    fusion: str, got: Gathered, trace: PackTrace | None, lexical: idf.Lexical | None = None
) -> dict[Layer, list[float | None]]:
    """Each candidate's relevance, normalised over the compile's candidates, per layer in candidate
    order (a list beside each layer's: a dict keyed by candidate cost more than the fusion itself).
    The lexical signal is ``lexical``'s BM25 (in the same candidate order), else ``ts_rank``.
    Knowledge below :data:`KNOWLEDGE_FLOOR`, and long-term small talk (:data:`HABIT_FLOOR`), leave ``got``
    here, with their relevance (noted in ``trace``)."""
    pool = [c for layer in RENDER_ORDER for c in got.layers.get(layer, [])]
    lex = lexical.scores if lexical is not None else [c.fts_rank for c in pool]
    signals = [(c.cosine, f) for c, f in zip(pool, lex, strict=True)]
    if fusion == "rrf":
        fused = rank_fusion(signals)
    elif lexical is not None:
        fused = contextual_relevance(signals, IDF_COSINE_WEIGHT)
    else:
        fused = contextual_relevance(signals)
    out: dict[Layer, list[float | None]] = {}
    start = 0
    for layer in RENDER_ORDER:
        end = start + len(got.layers.get(layer, []))
        out[layer], start = fused[start:end], end
    _keep(
        got, out, Layer.KNOWLEDGE, [(r or 0.0) >= KNOWLEDGE_FLOOR for r in out[Layer.KNOWLEDGE]], KNOWLEDGE_FLOOR, trace
    )
    long_term = got.layers.get(Layer.LONG_TERM, [])
    habits = said_on_several_days([(lean_text(c.snippet or c.text), c.happened_at) for c in long_term])
    keep = [
        not habit or (r or 0.0) >= HABIT_FLOOR or (c.importance or 0.0) >= IMPORTANT
        for c, r, habit in zip(long_term, out[Layer.LONG_TERM], habits, strict=True)
    ]
    _keep(got, out, Layer.LONG_TERM, keep, HABIT_FLOOR, trace)
    return out


def _keep(
    got: Gathered,
    out: dict[Layer, list[float | None]],
    layer: Layer,
    keep: list[bool],
    floor: float,
    trace: PackTrace | None,
) -> None:
    """Leave ``layer``'s candidates not to ``keep`` out of ``got`` and ``out`` (noted in ``trace``)."""
    rows = list(zip(got.layers.get(layer, []), out[layer], keep, strict=True))
    if trace is not None:
        trace.filtered += [Filtered(layer, c.kind, c.id, c.text, r or 0.0, floor) for c, r, k in rows if not k]
    got.layers[layer] = [c for c, _, k in rows if k]
    out[layer] = [r for _, r, k in rows if k]


def _needing_provenance(result: PackResult, got: Gathered, trace: PackTrace | None) -> list[cands.Candidate]:
    """The served items' candidates and those their lines stand for; every candidate when traced (the
    inspector shows the cut too)."""
    if trace is not None:
        return [c for layer in RENDER_ORDER for c in got.layers.get(layer, [])]
    served = [it for layer in (Layer.SESSION, Layer.LONG_TERM, Layer.KNOWLEDGE) for it in result.items(layer)]
    return [it.ref[0] for it in served] + [echo.ref[0] for echoes in result.echoes.values() for echo in echoes]


def _cite_echoes(result: PackResult) -> None:
    """A served line that stands for identical lines left out (``distinct``) cites their events too."""
    for (layer, item_id), echoes in result.echoes.items():
        served = next(it.ref[0] for it in result.items(layer) if it.id == item_id)
        cited = set(served.provenance).union(*(echo.ref[0].provenance for echo in echoes))
        served.provenance = tuple(sorted(cited))


def _serialise(req: PackRequest, got: Gathered, chosen: _Chosen, compiled_at: datetime) -> CompiledPack:
    """The fingerprint, the wire pack and its bytes."""
    cfg, result = req.config, chosen.result
    inputs = pack_key_inputs(req, got.head.state_version)
    fingerprint = pack_fingerprint(inputs, result.text)
    pack_id = uuid.uuid5(PACK_ID_NAMESPACE, fingerprint)
    data = build_pack(
        req,
        result,
        chosen.scorer,
        pack_id=pack_id,
        fingerprint=fingerprint,
        state_version=got.head.state_version,
        identity=chosen.identity if cfg.include_identity else None,
        temporal=chosen.temporal if got.head.last_event_at is not None and cfg.include_temporal else None,
        session_id=got.session.session_id if got.session else None,
        layer_tokens=layer_tokens(result),
        compiled_at=compiled_at,
    )
    memory_ids = tuple(
        it.ref[0].id  # the candidate's UUID as read (the item's id is its text)
        for layer in (Layer.SESSION, Layer.LONG_TERM)
        for it in result.items(layer)
        if it.ref[0].kind == "memory"
    )
    return CompiledPack(
        key=snapshot_key(inputs),
        fingerprint=fingerprint,
        pack_id=pack_id,
        state_version=got.head.state_version,
        body=encode(data),
        memory_ids=memory_ids,
        data=data,
    )
