"""Reading pack candidates: a handful of index-backed statements per compile, never per item.

Long-term memories and knowledge come from *all* of the anima's rows through three top-k arms
(four factors in SQL, HNSW cosine, full-text rank; see :mod:`.sql`). Events the dreamer has not
distilled yet are candidates too: the current session's newest ones as recent turns, the rest
as long-term candidates (factors + full-text; their cosine is computed by the caller).
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from elephantasm.db.driver_fetch import fetch
from elephantasm.db.size_switches import vector_rows_sql
from elephantasm.domain.presets import PackConfig
from elephantasm.domain.scoring import ScoringWeights
from elephantasm.services.packs import event_match, sql, topk
from elephantasm.services.packs.event_match import PENDING
from elephantasm.services.packs.session import SessionScope


@dataclass(slots=True)
class Candidate:
    """One thing that may go into a pack, with everything scoring and the wire need.

    Read-only by convention, not ``frozen``: a compile builds ~500 of them, and a frozen
    dataclass's ``__init__`` (one ``object.__setattr__`` per field) costs three times as much.
    The one exception: an event's ``cosine`` is set by the compile that read it (events have no
    stored vector), before anything else looks at it.
    """

    kind: str  # "memory" | "event" | "knowledge"
    id: uuid.UUID
    text: str
    importance: float | None
    confidence: float | None
    happened_at: datetime | None
    touched_at: datetime | None
    created_at: datetime | None
    recall_count: int
    cosine: float | None
    fts_rank: float | None
    provenance: tuple[uuid.UUID, ...]
    time_start: datetime | None = None
    time_end: datetime | None = None
    session_id: str | None = None
    label: str | None = None
    topic: str | None = None
    # A memory's turn vectors (domain.turn_vectors), when in the compile's embedding space, and
    # its content (where their lines are); ``snippet``: the line of the turn that matched the query.
    turn_vectors: bytes | None = None
    body: str | None = None
    snippet: str | None = None


@dataclass(frozen=True, slots=True)
class Scope:
    """What every candidate statement is parameterised by."""

    org_id: uuid.UUID
    anima_id: uuid.UUID
    as_of: datetime
    query: str | None
    query_vector: str | None  # pgvector text literal of the query embedding
    weights: ScoringWeights
    config: PackConfig
    space: int | None = None  # embedding space (code) of query_vector: only stored vectors of it are compared
    dim: int | None = None  # width of query_vector (the cosine arm reads that width's HNSW index)
    # The anima's ``vectors_indexed`` (from the compile's head read): whether the arms of its
    # memories and knowledge read the pack, HNSW and full-text indexes or its rows exactly.
    # False reads every anima right (its rows through an anima-keyed btree);
    # True only an anima that was flipped, whose rows are all in those indexes.
    vectors_indexed: bool = False

    @property
    def has_query(self) -> bool:
        """Whether relevance takes part."""
        return self.query is not None

    @property
    def uses_decay(self) -> bool:
        """Whether decay weighs anything (query presets weigh it 0): only then is recall state scored."""
        return self.weights.normalised(self.has_query).decay != 0.0

    def params(self, **extra: Any) -> dict[str, Any]:
        """Bind parameters of the shared fragments plus ``extra``."""
        w = self.weights.normalised(self.has_query)
        p: dict[str, Any] = {
            "org": self.org_id,
            "anima": self.anima_id,
            "as_of_epoch": self.as_of.timestamp(),
            "w_imp": w.importance,
            "w_conf": w.confidence,
            "w_rec": w.recency,
            "w_fresh": w.decay,
            "h_rec": self.config.recency_half_life_seconds,
            "h_dec": self.config.decay_half_life_seconds,
            "growth": float(self.config.decay_growth),
        }
        if self.has_query:
            p["q"] = self.query
            p["qv"] = self.query_vector
            p["space"] = self.space
        return p | extra


_EVENT_SPEAKERS = {
    "message.in": "user",
    "message.out": "assistant",
    "tool.call": "tool call",
    "tool.result": "tool result",
    "system": "system",
}


def event_text(event_type: str, role: str | None, content: str) -> str:
    """A raw event as one conversational line: ``speaker: content``."""
    return f"{role or _EVENT_SPEAKERS.get(event_type, event_type)}: {content}"


def _memory(r: Any) -> Candidate:
    # sql.memory_columns, in order (unpacking a record is cheaper than a lookup per name)
    mid, text_, importance, confidence, session_id, start, end, created, recalled, recalls, turns, body, cos, fts = r
    return Candidate(
        "memory",
        mid,
        text_,
        importance,
        confidence,
        end or start,
        recalled,
        created,
        recalls or 0,
        cos,
        fts,
        (),  # provenance: read for served items only (.provenance)
        start,
        end,
        session_id,
        None,
        None,
        turns,
        body,
    )


def _knowledge(r: Any) -> Candidate:
    # sql.KNOWLEDGE_COLUMNS, then cosine and fts_rank
    kid, type_, topic, content, importance, confidence, happened, cos, fts = r
    return Candidate(
        "knowledge",
        kid,
        content,
        importance,
        confidence,
        happened,
        None,
        None,
        0,
        cos,
        fts,
        (),
        label=type_,
        topic=topic,
    )


def _event(r: Any, fts_rank: float | None = None) -> Candidate:
    return Candidate(
        kind="event",
        id=r["id"],
        text=event_text(r["event_type"], r["role"], r["content"]),
        importance=r["importance_score"],
        confidence=None,
        happened_at=r["occurred_at"],
        touched_at=None,
        created_at=r["created_at"],
        recall_count=0,
        cosine=None,
        fts_rank=fts_rank,
        provenance=(r["id"],),
        time_start=r["occurred_at"],
        time_end=r["occurred_at"],
        session_id=r["session_id"],
    )


@functools.cache
def _long_term(has_query: bool, dim: int | None, decay: bool, indexed: bool) -> Any:
    """The long-term memories statement; without ``decay`` its four-factor arms never read recall
    state (memory_recalls is joined only for the few hundred rows read in the end). ``indexed``:
    the anima is large, its memories are in the pack, HNSW and full-text indexes (else the
    statement reads its rows through an anima-keyed btree: ``topk.top_k_union``)."""
    source = topk.Source(
        "memories",
        "m",
        f"{sql.MEMORY_ALIVE_OF_ANIMA} AND m.id <> ALL(:exclude){vector_rows_sql('m', indexed)}",
        sql.MEMORY_FACTORS if decay else sql.MEMORY_FACTORS_NO_DECAY,
        sql.memory_columns(has_query),
        happened=sql.MEMORY_HAPPENED,
        score_join=sql.MEMORY_RECALLS if decay else "",
        row_join=sql.MEMORY_RECALLS,
        # Without decay the score is the key's order up to time terms (topk's module doc, 4.).
        key=None if decay else sql.MEMORY_SCORE_KEY,
        owner=sql.MEMORY_OWNER,
    )
    return text(topk.top_k_union(source, has_query, dim))


@functools.cache
def _knowledge_statement(has_query: bool, dim: int | None, indexed: bool) -> Any:
    """The knowledge statement; ``indexed``: the anima's knowledge is in the pack, HNSW and
    full-text indexes (the anima's ``vectors_indexed``, as for memories),
    else the statement reads its few rows through an anima-keyed btree."""
    where = sql.KNOWLEDGE_CURRENT + vector_rows_sql("k", indexed)
    source = topk.Source("knowledge", "k", where, sql.KNOWLEDGE_FACTORS, sql.KNOWLEDGE_COLUMNS, sql.KNOWLEDGE_HAPPENED)
    return text(topk.top_k_union(source, has_query, dim))


_PENDING_WHERE = f"{sql.EVENT_PENDING} AND e.id <> ALL(:exclude)"
_PENDING = text(
    topk.top_k_union(topk.Source("events", "e", _PENDING_WHERE, sql.EVENT_FACTORS, sql.EVENT_COLUMNS), False)
)
# With a query, the text match is computed here (events store no tsvector: .event_match).
_PENDING_Q = event_match.pending_statement(_PENDING_WHERE, sql.EVENT_FACTORS)

_SESSION_MEMORY_WHERE = {
    True: f"{sql.MEMORY_ALIVE} AND m.session_id = :sid",
    False: (
        f"{sql.MEMORY_ALIVE} AND m.session_id IS NULL AND coalesce(m.time_end, m.time_start, m.created_at) >= :start"
    ),
}
_SESSION_MEMORIES = {
    (named, q): text(
        topk.scoped_select(
            "memories", "m", where, sql.memory_columns(q), "m.time_end DESC NULLS LAST, m.id", q, sql.MEMORY_RECALLS
        )
    )
    for named, where in _SESSION_MEMORY_WHERE.items()
    for q in (False, True)
}
_TURN_WHERE = {
    True: f"{sql.EVENT_PENDING} AND e.session_id = :sid",
    False: f"{sql.EVENT_PENDING} AND e.session_id IS NULL AND e.occurred_at >= :start",
}
_TURN_ORDER = "e.occurred_at DESC, e.id DESC"
_RECENT_TURNS = {
    named: text(topk.scoped_select("events", "e", where, sql.EVENT_COLUMNS, _TURN_ORDER, False))
    for named, where in _TURN_WHERE.items()
}
_RECENT_TURNS_Q = {named: event_match.recent_statement(where, _TURN_ORDER) for named, where in _TURN_WHERE.items()}


def _session_params(scope: Scope, session: SessionScope, k: int) -> dict[str, Any]:
    named = session.session_id is not None
    extra = {"sid": session.session_id} if named else {"start": session.start}
    return scope.params(k=k, **extra)


def _pruning(scope: Scope, k: int) -> dict[str, Any]:
    """Parameters of the pruned four-factor arm (see :mod:`.topk`)."""
    cut = timedelta(seconds=topk.recency_cut_seconds(scope.config.recency_half_life_seconds))
    return {"k": k, "kth": k - 1, "seed": max(k, topk.SEED_ROWS), "t_cut": scope.as_of - cut}


async def session_memories(conn: AsyncConnection, scope: Scope, session: SessionScope, k: int) -> list[Candidate]:
    """The newest ``k`` live memories of the current session."""
    stmt = _SESSION_MEMORIES[(session.session_id is not None, scope.has_query)]
    rows = await fetch(conn, stmt, _session_params(scope, session, k))
    return [_memory(r) for r in rows]


async def recent_turns(conn: AsyncConnection, scope: Scope, session: SessionScope, n: int) -> list[Candidate]:
    """The newest ``n`` not-yet-distilled events of the current session."""
    named = session.session_id is not None
    if not scope.has_query:
        return [_event(r) for r in await fetch(conn, _RECENT_TURNS[named], _session_params(scope, session, n))]
    params = _session_params(scope, session, n) | {"upto": PENDING.upto(scope.anima_id)}
    rows = await fetch(conn, _RECENT_TURNS_Q[named], params)
    held = await PENDING.resolve(conn, params, rows)
    ranked = await event_match.ranked(conn, scope.query or "", held, rows)
    return [_event(r, f) for (r, _), (f, _) in zip(held, ranked, strict=True)]


async def long_term_memories(
    conn: AsyncConnection, scope: Scope, k: int, exclude: Sequence[uuid.UUID]
) -> list[Candidate]:
    """Top-``k`` per arm over all the anima's live memories, minus ``exclude`` (the session's)."""
    params = scope.params(exclude=list(exclude), **_pruning(scope, k))
    rows = await fetch(conn, _long_term(scope.has_query, scope.dim, scope.uses_decay, scope.vectors_indexed), params)
    return [_memory(r) for r in rows]


async def knowledge(conn: AsyncConnection, scope: Scope, k: int) -> list[Candidate]:
    """Top-``k`` per arm over the anima's current (not superseded, not expired) knowledge."""
    params = scope.params(**_pruning(scope, k))
    stmt = _knowledge_statement(scope.has_query, scope.dim, scope.vectors_indexed)
    return [_knowledge(r) for r in await fetch(conn, stmt, params)]


async def pending_events(conn: AsyncConnection, scope: Scope, k: int, exclude: Sequence[uuid.UUID]) -> list[Candidate]:
    """Top-``k`` per arm over undistilled events, minus ``exclude`` (the recent turns)."""
    params = scope.params(k=k, exclude=list(exclude))
    if not scope.has_query:
        return [_event(r) for r in await fetch(conn, _PENDING, params)]
    params["upto"] = PENDING.upto(scope.anima_id)
    rows = await fetch(conn, _PENDING_Q, params)
    others = (rows[0]["others"] or []) if rows else []
    held = await PENDING.resolve(conn, params, rows, others)
    PENDING.settle(scope.anima_id, held, exclude)
    ranked = await event_match.ranked(conn, scope.query or "", held, rows)
    factor = [r["in_factor"] for r in rows] + [False] * len(others)
    # The text arm can add events only when k did not cover them all.
    arm = event_match.text_arm([h["id"] for h, _ in held], ranked, k) if not all(factor) else set()
    kept = [
        (h, f) for in_factor, (h, _), (f, _) in zip(factor, held, ranked, strict=True) if in_factor or h["id"] in arm
    ]
    if others:  # in id order, as the rows are (and as the SQL union's primary-key read gave them)
        kept.sort(key=lambda hf: hf[0]["id"])
    return [_event(h, f) for h, f in kept]


# A memory linked to a knowledge item that was superseded (or expired) while a current item on
# the same subject exists holds a value that is no longer true: "my favorite game is Catan" after
# "I switched to Azul". It must not be served as current, so the compile drops it, even when the
# same exchange also stated other facts (one noisy exchange often does): those stay served by
# their own current knowledge items, which cite the same events. A memory that is itself linked to
# the current item of that subject ("I moved from Tallinn to Porto") is the update, and is kept.
# Memories without knowledge are kept. Ids are batched: one statement per compile.
_SUPERSEDED_MEMORIES = text("""
SELECT ids.id AS memory_id FROM unnest(CAST(:ids AS uuid[])) AS ids(id)
WHERE EXISTS (
  SELECT 1 FROM knowledge_memories km JOIN knowledge k ON k.id = km.knowledge_id
  WHERE km.memory_id = ids.id AND km.org_id = :org AND km.anima_id = :anima
    AND k.org_id = :org AND k.anima_id = :anima AND k.deleted_at IS NULL
    AND (k.superseded_by IS NOT NULL OR k.valid_to IS NOT NULL) AND k.subject_key IS NOT NULL AND EXISTS (
      SELECT 1 FROM knowledge n
      WHERE n.org_id = :org AND n.anima_id = :anima AND n.subject_key = k.subject_key AND n.id <> k.id
        AND n.deleted_at IS NULL AND n.valid_to IS NULL AND n.superseded_by IS NULL
        AND NOT EXISTS (SELECT 1 FROM knowledge_memories own
                        WHERE own.knowledge_id = n.id AND own.memory_id = km.memory_id)))
""")


async def superseded_memories(conn: AsyncConnection, scope: Scope, ids: Sequence[uuid.UUID]) -> frozenset[uuid.UUID]:
    """Which of ``ids`` (memory ids) carry a superseded value (see ``_SUPERSEDED_MEMORIES``)."""
    if not ids:
        return frozenset()
    rows = await fetch(conn, _SUPERSEDED_MEMORIES, {"org": scope.org_id, "anima": scope.anima_id, "ids": list(ids)})
    return frozenset(r["memory_id"] for r in rows)
