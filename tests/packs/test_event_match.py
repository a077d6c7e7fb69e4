"""Pending events (which store no tsvector) are text-matched from lexemes this process keeps, by
Postgres itself: the same ``ts_rank`` float, the same arm, the same rows as SQL over the texts."""

from __future__ import annotations

import random
import uuid
from datetime import timedelta

from sqlalchemy import text

from elephantasm.runtime import Runtime
from elephantasm.services.packs import candidates as cands
from elephantasm.services.packs import event_match
from elephantasm.services.packs.compiler import compile_weights
from elephantasm.services.packs.reads import snapshot_transaction
from elephantasm.services.packs.service import build_request
from tests.conftest import Tenant
from tests.dreams.helpers import add_events, new_anima

_WORDS = (
    "the running runner ran runs kettle kettles Berlin office closed Friday holiday standup moved design "
    "review long I prefer short written summaries calls decision pending it's O'Brien back\\slash naïve café "
    "über 10:30 v2.1 user@example.com quick brown fox jumps jumped lazy dog dogs user assistant"
).split()

# The candidate SQL's query lexemes (services/packs/sql.py TSQUERY_CTE) and match, on texts given.
_REFERENCE = text(f"""
WITH q AS (SELECT CAST(:q AS text) AS q), {cands.sql.TSQUERY_CTE.replace("CAST(:q AS text)", "(SELECT q FROM q)")},
t AS (SELECT i, to_tsvector('english', x) AS v FROM unnest(CAST(:texts AS text[])) WITH ORDINALITY AS u(x, i))
SELECT t.i, t.v::text AS tv, (SELECT array_agg(l ORDER BY i) FROM lex) AS q_lex,
       CASE WHEN t.v @@ tsq.q_any THEN ts_rank(t.v, tsq.q_any)::float8 ELSE 0.0 END AS rank,
       coalesce(t.v @@ tsq.q_arm, false) AS arm
FROM t, tsq ORDER BY t.i
""")


async def test_ranks_of_held_lexemes_equal_postgres_on_the_texts(runtime: Runtime) -> None:
    # Lexemes kept as text (quotes, backslashes, repeats, long texts) rank as the texts themselves do.
    rnd = random.Random(5)
    async with runtime.engine.connect() as conn:
        for case in range(40):
            texts = [
                " ".join(rnd.choice(_WORDS) for _ in range(rnd.randint(1, 300 if i == 0 else 40))) for i in range(25)
            ]
            query = " ".join(rnd.choice(_WORDS) for _ in range(rnd.randint(1, 12)))
            rows = (await conn.execute(_REFERENCE, {"q": query, "texts": texts})).all()
            got = await event_match.ranked(conn, query, [(None, r.tv) for r in rows], [{"q_lex": rows[0].q_lex}])
            assert got == [(r.rank, r.arm) for r in rows], (case, query)
    assert any(r for r, _ in got)  # the cases do match, not only miss
    async with runtime.engine.connect() as conn:
        stop_words_only = [{"q_lex": None}]
        assert await event_match.ranked(conn, "the of", [(None, "'kettl':1")], stop_words_only) == [(0.0, False)]
        assert await event_match.ranked(conn, "kettle", [], [{"q_lex": ["kettl"]}]) == []


# What the pending-event candidates were when events stored their tsvector: the four-factor top k
# ∪ the full-text top k (topk.top_k_union), with to_tsvector computed on the fly instead of stored.
_OLD_PENDING = text(f"""
WITH {cands.sql.TSQUERY_CTE},
ef AS (SELECT e.id FROM events e WHERE {cands._PENDING_WHERE} ORDER BY {cands.sql.EVENT_FACTORS} DESC, e.id LIMIT :k),
et AS (SELECT e.id FROM events e, tsq WHERE {cands._PENDING_WHERE} AND {event_match.EVENT_TSVECTOR} @@ tsq.q_arm
       ORDER BY ts_rank({event_match.EVENT_TSVECTOR}, tsq.q_any) DESC, e.id LIMIT :k)
SELECT e.id, CASE WHEN {event_match.EVENT_TSVECTOR} @@ tsq.q_any
                  THEN ts_rank({event_match.EVENT_TSVECTOR}, tsq.q_any)::float8 ELSE 0.0 END AS fts_rank
FROM events e, tsq WHERE e.id IN (SELECT id FROM ef UNION SELECT id FROM et) ORDER BY e.id
""")


async def _both(runtime: Runtime, tenant: Tenant, anima: uuid.UUID, query: str, k: int) -> tuple[list, list]:
    req = build_request(runtime.packs, tenant.org_id, anima, query=query)
    scope = cands.Scope(
        tenant.org_id, anima, req.as_of, query, None, compile_weights(req.config, query), req.config, None, None
    )
    async with snapshot_transaction(runtime.engine) as conn:
        new = [(c.id, c.fts_rank) for c in await cands.pending_events(conn, scope, k, [])]
        old = [tuple(r) for r in (await conn.execute(_OLD_PENDING, scope.params(k=k, exclude=[]))).all()]
    return new, old


async def test_pending_events_are_the_rows_and_ranks_the_stored_tsvector_gave(runtime: Runtime, tenant: Tenant) -> None:
    anima = await new_anima(runtime, tenant.org_id)
    rnd = random.Random(9)
    t0 = runtime.clock() - timedelta(days=3)
    specs = [
        {
            "event_type": "message.in",
            "role": "user",
            "content": " ".join(rnd.choice(_WORDS) for _ in range(rnd.randint(3, 30))),
            "occurred_at": t0 + timedelta(minutes=i),
            "importance_score": round(rnd.random(), 2),
        }
        for i in range(60)
    ]
    await add_events(runtime, tenant.org_id, anima, specs)
    for k in (5, 20, 100):  # fewer than pending (the text arm adds rows) and more
        for query in ("kettle Berlin holiday", "dogs jumping", "running decision pending review"):
            new, old = await _both(runtime, tenant, anima, query, k)
            assert new == old, (k, query)
            assert len(new) > k or k >= 60  # the text arm brought events the factor arm did not
    # New events after the cache has settled: made once, ranked the same.
    await add_events(runtime, tenant.org_id, anima, [{"event_type": "message.in", "content": "kettle kettle Berlin"}])
    new, old = await _both(runtime, tenant, anima, "kettle Berlin holiday", 5)
    assert new == old and any(rank > 0 for _, rank in new)


async def test_a_lost_cache_entry_is_read_again_not_misranked(runtime: Runtime, tenant: Tenant) -> None:
    anima = await new_anima(runtime, tenant.org_id)
    await add_events(
        runtime,
        tenant.org_id,
        anima,
        [{"event_type": "message.in", "content": f"the kettle boiled over on day {i}"} for i in range(12)],
    )
    before, old = await _both(runtime, tenant, anima, "kettle boiled", 4)
    assert before == old
    # The cache claims every pending event is held but has lost them (an older snapshot, an eviction).
    held = event_match.PENDING._anima(anima)
    held.events.clear()
    assert event_match.PENDING.upto(anima) >= 12
    after, _ = await _both(runtime, tenant, anima, "kettle boiled", 4)
    assert after == before


async def test_the_held_events_are_bounded_by_events_and_by_animas() -> None:
    def rows(*seqs: int) -> list[dict]:
        return [{"id": uuid.uuid4(), "seq": s, "terms": f"'w{s}':1"} for s in seqs]

    cache = event_match.PendingEvents(max_events=5, max_animas=3)
    params = {"org": uuid.uuid4()}
    a, b, c, d = (uuid.uuid4() for _ in range(4))
    for anima, seqs in ((a, (1, 2)), (b, (1, 2)), (c, (7,))):
        got = rows(*seqs)
        held = await cache.resolve(None, params | {"anima": anima}, got)  # type: ignore[arg-type]  # never reads
        assert [h[1] for h in held] == [f"'w{s}':1" for s in seqs]
        cache.settle(anima, held, [])
    assert [cache.upto(x) for x in (a, b, c)] == [2, 2, 7]
    cache.settle(d, await cache.resolve(None, params | {"anima": d}, rows(3)), [])  # type: ignore[arg-type]
    assert cache.upto(a) == 0  # a fourth anima evicts the least recently compiled one
    cache.settle(c, await cache.resolve(None, params | {"anima": c}, rows(8, 9)), [])  # type: ignore[arg-type]
    assert cache.upto(b) == 0 and cache.upto(c) == 9  # more than 5 events held: b goes too
