"""Pending events, which store no tsvector, are text-matched by the candidate statement itself: the
rows and ``ts_rank`` floats are those of the plain formulation (both arms over the table, the
lexemes made wherever they are used)."""

from __future__ import annotations

import random
import uuid
from datetime import timedelta

from sqlalchemy import text

from elephantasm.runtime import Runtime
from elephantasm.services.packs import candidates as cands
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

# The pending-event candidates as plainly as they can be written: the four-factor top k ∪ the
# full-text top k, to_tsvector computed wherever it is used.
_OLD_PENDING = text(f"""
WITH {cands.sql.TSQUERY_CTE},
ef AS (SELECT e.id FROM events e WHERE {cands._PENDING_WHERE} ORDER BY {cands.sql.EVENT_FACTORS} DESC, e.id LIMIT :k),
et AS (SELECT e.id FROM events e, tsq WHERE {cands._PENDING_WHERE} AND {cands.sql.EVENT_TSVECTOR} @@ tsq.q_arm
       ORDER BY ts_rank({cands.sql.EVENT_TSVECTOR}, tsq.q_any) DESC, e.id LIMIT :k)
SELECT e.id, CASE WHEN {cands.sql.EVENT_TSVECTOR} @@ tsq.q_any
                  THEN ts_rank({cands.sql.EVENT_TSVECTOR}, tsq.q_any)::float8 ELSE 0.0 END AS fts_rank
FROM events e, tsq WHERE e.id IN (SELECT id FROM ef UNION SELECT id FROM et) ORDER BY e.id
""")


async def _both(runtime: Runtime, tenant: Tenant, anima: uuid.UUID, query: str, k: int) -> tuple[list, list]:
    req = build_request(runtime, tenant.org_id, anima, query=query)
    scope = cands.Scope(
        tenant.org_id, anima, req.as_of, query, None, compile_weights(req.config, query), req.config, None, None
    )
    async with snapshot_transaction(runtime) as conn:
        new = [(c.id, c.fts_rank) for c in await cands.pending_events(conn, scope, k, [])]
        old = [tuple(r) for r in (await conn.execute(_OLD_PENDING, scope.params(k=k, exclude=[]))).all()]
    return new, old


async def test_pending_events_are_the_rows_and_ranks_of_the_plain_statement(runtime: Runtime, tenant: Tenant) -> None:
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
    # A new event is matched at once.
    await add_events(runtime, tenant.org_id, anima, [{"event_type": "message.in", "content": "kettle kettle Berlin"}])
    new, old = await _both(runtime, tenant, anima, "kettle Berlin holiday", 5)
    assert new == old and any(rank > 0 for _, rank in new)
