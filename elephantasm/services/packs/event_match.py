"""Full-text rank of pending events, computed in this process from lexemes Postgres made once.

Events keep no stored tsvector (migration 0012: it was a third of an event row and about half of
Postgres's work per inserted event, for a reader that only ever looks at an anima's few pending
events). A compile with a query still text-matches those events exactly as before: Postgres
makes each event's lexemes (``to_tsvector``, as the stored column did) the first time this process
sees the event, and :mod:`elephantasm.domain.text_rank` gives the same match and the same
``ts_rank`` float as the SQL did. Events never change, so their lexeme counts are kept
(:class:`EventTerms`): a compile that follows an extract makes lexemes for the new event only.

Which events need lexemes is decided by seq: for each anima the cache knows ``upto``, a seq up to
which every pending event is held, so a statement asks Postgres only for ``seq > upto``. A row
that still comes back without lexemes and is not held (an older snapshot than the one that set
``upto``, an evicted anima) is looked up by id: correctness never rests on the hint.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from elephantasm.db.driver_fetch import fetch
from elephantasm.domain import text_rank
from elephantasm.services.packs import sql

# The expression the stored column had (migrations 0001–0011): ranks are unchanged.
EVENT_TSVECTOR = "to_tsvector('english', coalesce(e.summary, '') || ' ' || e.content)"
_TERMS = f"CASE WHEN e.seq > :upto THEN {EVENT_TSVECTOR}::text END AS terms"
_QUERY_LEXEMES = "(SELECT array_agg(l ORDER BY i) FROM lex) AS q_lex"


def recent_statement(where: str, order: str) -> Any:
    """The newest ``:k`` events matching ``where`` (a query's compile), with lexemes as needed."""
    return text(
        f"WITH {sql.TSQUERY_CTE} SELECT {sql.EVENT_COLUMNS}, e.seq, {_TERMS}, {_QUERY_LEXEMES} "
        f"FROM events e WHERE {where} ORDER BY {order} LIMIT :k"
    )


def pending_statement(where: str, score: str) -> Any:
    """The four-factor top ``:k`` of the events matching ``where``, and how many match in all
    (``n_pending``): more than ``:k`` means the full-text arm has to look at the others too."""
    return text(
        f"WITH {sql.TSQUERY_CTE}, ef AS (SELECT e.id, count(*) OVER () AS n FROM events e WHERE {where} "
        f"ORDER BY {score} DESC, e.id LIMIT :k) "
        f"SELECT {sql.EVENT_COLUMNS}, e.seq, {_TERMS}, {_QUERY_LEXEMES}, (SELECT max(n) FROM ef) AS n_pending "
        "FROM events e WHERE e.id = ANY(ARRAY(SELECT id FROM ef))"
    )


def rest_statement(where: str) -> Any:
    """Ids, seqs and (as needed) lexemes of every event matching ``where``: the text arm's pool."""
    return text(f"SELECT e.id, e.seq, {_TERMS} FROM events e WHERE {where}")


_BY_ID = "e.org_id = :org AND e.anima_id = :anima AND e.id = ANY(CAST(:ids AS uuid[]))"
ROWS_BY_ID = text(f"SELECT {sql.EVENT_COLUMNS}, e.seq, NULL::text AS terms FROM events e WHERE {_BY_ID}")
"""Candidate rows by id (the text arm's that the factor arm did not bring; their lexemes are held)."""
# Lexemes by id, for rows whose lexemes the cache does not hold although their seq said it would.
_LEXEMES_BY_ID = text(f"SELECT e.id, e.seq, {EVENT_TSVECTOR}::text AS terms FROM events e WHERE {_BY_ID}")


@dataclass(slots=True)
class _Held:
    upto: int = 0
    terms: dict[uuid.UUID, tuple[int, text_rank.Counts]] = field(default_factory=dict)


class EventTerms:
    """Lexeme counts of the pending events of recently compiled animas (a bounded LRU of animas).

    Shared by the process's compiles: an event's lexemes depend on its text only, which never
    changes, so a held entry is never stale. Each anima holds its pending events of the last
    compile (``settle``), so the memory is bounded by pending events, not by history.
    """

    def __init__(self, animas: int = 2048) -> None:
        self._animas: OrderedDict[uuid.UUID, _Held] = OrderedDict()
        self._max = animas

    def _held(self, anima: uuid.UUID) -> _Held:
        held = self._animas.get(anima)
        if held is None:
            held = self._animas[anima] = _Held()
            if len(self._animas) > self._max:
                self._animas.popitem(last=False)
        else:
            self._animas.move_to_end(anima)
        return held

    def upto(self, anima: uuid.UUID) -> int:
        """The seq up to which every pending event of ``anima`` is held (0: none known)."""
        held = self._animas.get(anima)
        return held.upto if held is not None else 0

    async def counts(
        self, conn: AsyncConnection, params: dict[str, Any], rows: Sequence[Any]
    ) -> list[text_rank.Counts]:
        """Lexeme counts for ``rows`` (with ``id``, ``seq``, ``terms``) in row order, held from now on;
        ``params`` name the anima (``org``, ``anima``)."""
        held = self._held(params["anima"]).terms
        missing = []
        for r in rows:
            if r["terms"] is not None:
                held[r["id"]] = (r["seq"], text_rank.parse_tsvector(r["terms"]))
            elif r["id"] not in held:
                missing.append(r["id"])
        if missing:  # usually none: see the module doc
            for r in await fetch(conn, _LEXEMES_BY_ID, params | {"ids": missing}):
                held[r["id"]] = (r["seq"], text_rank.parse_tsvector(r["terms"]))
        return [held[r["id"]][1] for r in rows]

    def settle(self, anima: uuid.UUID, pending: Iterable[uuid.UUID]) -> None:
        """Keep only ``pending`` (every pending event a compile saw, all held) and move ``upto``
        to the highest of their seqs: every pending event at or below it is held."""
        held = self._held(anima)
        kept = {i: held.terms[i] for i in pending if i in held.terms}
        held.terms = kept
        held.upto = max((seq for seq, _ in kept.values()), default=held.upto)


TERMS = EventTerms()
"""The process's cache (compiles of every runtime in the process share it: entries are exact)."""


def ranks(counts: Sequence[text_rank.Counts], query_lexemes: Sequence[str] | None) -> list[float]:
    """``fts_rank`` of each event as the candidate SQL computes it for memories (0.0: no match)."""
    if not query_lexemes:
        return [0.0] * len(counts)
    ordered = text_rank.query_order(query_lexemes)
    return [text_rank.rank(c, ordered) for c in counts]


def text_arm(
    ids: Sequence[uuid.UUID], counts: Sequence[text_rank.Counts], query_lexemes: Sequence[str], k: int
) -> list[uuid.UUID]:
    """The full-text arm: up to ``k`` ids matching ``q_arm``, by ``ts_rank`` descending then id."""
    ordered = text_rank.query_order(query_lexemes)
    hits = [
        (-text_rank.rank(c, ordered), i)
        for i, c in zip(ids, counts, strict=True)
        if text_rank.matches_arm(c, query_lexemes)
    ]
    return [i for _, i in sorted(hits)[:k]]
