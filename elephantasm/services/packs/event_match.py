"""Full-text rank of pending events, from lexemes Postgres made once and this process keeps.

Events keep no stored tsvector (it would be a third of an event row and about half of
Postgres's work per inserted event, for a reader that only ever looks at an anima's few pending
events), and making every pending event's lexemes again in each compile with a query cost more than
the rest of its candidate reads (``to_tsvector`` of ~200 events). So Postgres makes an event's
lexemes the first time this process sees the event, the process keeps their text, and each compile
sends the held lexemes back for Postgres's own match and ``ts_rank`` (:func:`ranked`): parsing a
tsvector is cheap, stemming is not.

Events never change, so what a compile read of a pending event (its candidate columns and its
lexemes) is kept (:class:`PendingEvents`): the next compile of the anima reads only the ids,
seqs and four-factor membership of the events it already holds, and everything for the new ones
(a compile that follows an extract: one). Which events are new is decided by seq: for each anima
the cache knows ``upto``, a seq up to which every pending event is held, and a statement returns
columns only for ``seq > upto``. A row that comes back bare and is not held (a snapshot older than
the one that set ``upto``, an evicted anima) is read again by id: correctness never rests on the hint.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from elephantasm.db import event_state
from elephantasm.db.driver_fetch import fetch
from elephantasm.services.packs import sql

# The text an event is matched on (its summary and content).
EVENT_TSVECTOR = "to_tsvector('english', coalesce(e.summary, '') || ' ' || e.content)"
_NEW = "e.seq > :upto"
_NEW_P = "p.seq > :upto"
_FULL = f"{sql.EVENT_COLUMNS}, e.seq, {EVENT_TSVECTOR}::text AS terms"
_FULL_NEW = f"{sql.EVENT_COLUMNS}, e.seq, CASE WHEN {_NEW} THEN {EVENT_TSVECTOR}::text END AS terms"
# The candidate columns and lexemes of new events only; NULL for those held (terms NULL = held).
_NEW_ONLY = ", ".join(
    f"CASE WHEN {_NEW} THEN {expr} END AS {name}"
    for expr, name in (
        *((f"e.{c}", c) for c in ("event_type", "role")),
        (f"left(e.content, {sql.EVENT_TEXT_CHARS})", "content"),
        *((f"e.{c}", c) for c in ("occurred_at", "session_id", "importance_score", "created_at")),
        (f"{EVENT_TSVECTOR}::text", "terms"),
    )
)


def _query_lexemes(order: str) -> str:
    # The query's lexemes (those the SQL arms use), on the first row only: an array on every row cost
    # more to decode than the rest of the row.
    lexemes = "(SELECT array_agg(l ORDER BY i) FROM lex)"
    return f"CASE WHEN row_number() OVER (ORDER BY {order}) = 1 THEN {lexemes} END AS q_lex"


def recent_statement(where: str, order: str) -> Any:
    """The newest ``:k`` events matching ``where`` (a query's compile): all columns, lexemes of new ones."""
    return text(
        f"WITH {sql.TSQUERY_CTE} SELECT {_FULL_NEW}, {_query_lexemes(order)} "
        f"FROM events e WHERE {where} ORDER BY {order} LIMIT :k"
    )


def pending_statement(where: str, score: str) -> Any:
    """An anima's pending events matching ``where`` for a query's compile, in one round trip: a row
    for each event in the four-factor top ``:k`` (``in_factor``) or new to this process (columns and
    lexemes for new ones only), and on the first row ``others``, the ids of the rest (held here:
    the full-text arm is chosen among all of them in Python, :func:`text_arm`)."""
    return text(
        f"WITH {sql.TSQUERY_CTE}, p AS MATERIALIZED (SELECT e.id, e.seq, {score} AS s FROM events e WHERE {where}), "
        "ef AS (SELECT id FROM p ORDER BY s DESC, id LIMIT :k), "
        f"rest AS (SELECT array_agg(id) AS ids FROM p WHERE NOT {_NEW_P} AND id <> ALL(ARRAY(SELECT id FROM ef))) "
        f"SELECT e.id, e.seq, e.id = ANY(ARRAY(SELECT id FROM ef)) AS in_factor, {_query_lexemes('e.id')}, "
        f"CASE WHEN row_number() OVER (ORDER BY e.id) = 1 THEN (SELECT ids FROM rest) END AS others, {_NEW_ONLY} "
        f"FROM events e WHERE e.id = ANY(ARRAY(SELECT id FROM ef UNION SELECT id FROM p WHERE {_NEW_P})) "
        "ORDER BY e.id"
    )


# Held events the cache lost (see the module doc): everything again, by id.
_BY_ID = text(
    f"SELECT {_FULL} FROM events e WHERE {event_state.of_anima('e', 'anima', 'org')} AND e.id = ANY(CAST(:ids AS uuid[]))"
)

Held = tuple[Any, str]
"""A pending event as a compile needs it: its row (the candidate columns and ``seq``), its lexemes
(``to_tsvector``'s text form)."""


@dataclass(slots=True)
class _Anima:
    upto: int = 0
    events: dict[uuid.UUID, Held] = field(default_factory=dict)


class PendingEvents:
    """The pending events of recently compiled animas: rows and lexemes, by event id.

    Shared by the process's compiles: an event never changes, so a held entry is never stale.
    Each anima keeps the pending events of its last compile (:meth:`settle`); the animas are an
    LRU bounded by the number of events held in all, and by their own number.
    """

    def __init__(self, max_events: int = 50_000, max_animas: int = 10_000) -> None:
        self._animas: OrderedDict[uuid.UUID, _Anima] = OrderedDict()
        self._max = max_events
        self._max_animas = max_animas
        self._count = 0

    def upto(self, anima: uuid.UUID) -> int:
        """The seq up to which every pending event of ``anima`` is held (0: none known)."""
        held = self._animas.get(anima)
        return held.upto if held is not None else 0

    def _anima(self, anima: uuid.UUID) -> _Anima:
        held = self._animas.get(anima)
        if held is None:
            held = self._animas[anima] = _Anima()
            if len(self._animas) > self._max_animas:
                self._count -= len(self._animas.popitem(last=False)[1].events)
        else:
            self._animas.move_to_end(anima)
        return held

    async def resolve(
        self, conn: AsyncConnection, params: dict[str, Any], rows: Sequence[Any], ids: Sequence[uuid.UUID] = ()
    ) -> list[Held]:
        """Each of ``rows`` (``id`` and ``terms``: NULL when held), then each of ``ids`` (held), as
        held, in that order; ``params`` name the anima (``org``, ``anima``). New ones are held from now on."""
        events = self._anima(params["anima"]).events
        out: list[Held | None] = []
        missing = []
        for r in rows:
            if r["terms"] is not None:
                self._count += r["id"] not in events
                held = events[r["id"]] = (r, r["terms"])
                out.append(held)
            elif (found := events.get(r["id"])) is not None:
                out.append(found)
            else:
                missing.append(r["id"])
                out.append(None)
        for i in ids:
            if (found := events.get(i)) is None:
                missing.append(i)
            out.append(found)
        if not missing:
            return out  # type: ignore[return-value]  # no None left
        for r in await fetch(conn, _BY_ID, params | {"ids": missing}):
            self._count += 1
            events[r["id"]] = (r, r["terms"])
        keys = [*(r["id"] for r in rows), *ids]
        return [h if h is not None else events[i] for i, h in zip(keys, out, strict=True)]

    def settle(self, anima: uuid.UUID, pending: Sequence[Held], exclude: Sequence[uuid.UUID]) -> None:
        """After a compile resolved every pending event of ``anima`` in its snapshot (``pending``, and
        the held ones among ``exclude``, the recent turns): move ``upto`` to the highest of their
        seqs, so every pending event at or below it is held. Distilled events are dropped once they
        outnumber the pending ones."""
        held = self._anima(anima)
        events = held.events
        top = max((h[0]["seq"] for h in pending), default=0)
        for i in exclude:
            if (h := events.get(i)) is not None:
                top = max(top, h[0]["seq"])
        held.upto = max(held.upto, top)
        if len(events) > 2 * (len(pending) + len(exclude)) + 64:
            keep = {h[0]["id"] for h in pending}.union(exclude)
            held.events = {i: h for i, h in events.items() if i in keep}
            self._count -= len(events) - len(held.events)
        while self._count > self._max and len(self._animas) > 1:
            _, evicted = self._animas.popitem(last=False)
            self._count -= len(evicted.events)


PENDING = PendingEvents()
"""The process's cache (compiles of every runtime in the process share it: entries are exact)."""


def text_arm(ids: Sequence[uuid.UUID], ranked: Sequence[tuple[float, bool]], k: int) -> set[uuid.UUID]:
    """The full-text arm: up to ``k`` ids matching ``q_arm``, by ``ts_rank`` descending then id
    (``ranked``: :func:`ranked` of each id's lexemes)."""
    hits = sorted((-r, i) for i, (r, arm) in zip(ids, ranked, strict=True) if arm)
    return {i for _, i in hits[:k]}


# The match and rank the memories' statements compute (sql.match_columns, the full-text arm's q_arm),
# over lexemes sent back as text.
_RANKS = text(f"""
WITH {sql.TSQUERY_CTE}
SELECT CASE WHEN v.t @@ tsq.q_any THEN ts_rank(v.t, tsq.q_any)::float8 ELSE 0.0 END AS rank,
       coalesce(v.t @@ tsq.q_arm, false) AS arm
FROM unnest(CAST(:lexemes AS text[])) WITH ORDINALITY AS u(s, i), LATERAL (SELECT CAST(u.s AS tsvector) AS t) v, tsq
ORDER BY u.i
""")


async def ranked(
    conn: AsyncConnection, query: str, held: Sequence[Held], rows: Sequence[Any]
) -> list[tuple[float, bool]]:
    """``(ts_rank, matches the full-text arm's query)`` of each held event for ``query``, by Postgres;
    ``rows``: the statement's rows, whose first carries the query's lexemes. Only lexemes naming one
    of them are sent (most pending events match nothing); the rest rank 0.0 and miss the arm."""
    query_lexemes = (rows[0]["q_lex"] or ()) if rows else ()
    marks = [_entry_mark(lexeme) for lexeme in query_lexemes]
    sent = [i for i, (_, lexemes) in enumerate(held) if any(m in lexemes for m in marks)]
    out = [(0.0, False)] * len(held)
    if sent:
        got = await fetch(conn, _RANKS, {"q": query, "lexemes": [held[i][1] for i in sent]})
        for i, r in zip(sent, got, strict=True):
            out[i] = (r["rank"], r["arm"])
    return out


def _entry_mark(lexeme: str) -> str:
    """How ``lexeme``'s entry opens in a tsvector's text (``'lexeme':1,4``, quotes and backslashes doubled)."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "':"
