"""The importance arm read through the score key picks the rows it picked without it,
and the packs are byte for byte the same.

With a query the long-term statement's older-rows arm walks ``ix_memories_pack_score`` (importance
+ 0.4 × confidence) instead of every row above an importance bound that assumes confidence 1
(``services/packs/topk.py``, module doc 4.). The bound it derives must never drop a row of the
arm's exact top k: here both statements run over the same memories, many of them tied, a few out
of [0, 1], for weights whose confidence/importance ratio is below, at and above the key's, a zero
importance weight, and a non-zero recency weight, and must return the same rows.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from sqlalchemy import text

from elephantasm.db.driver_fetch import fetch
from elephantasm.db.size_switches import vector_rows_sql
from elephantasm.domain.presets import PackConfig
from elephantasm.domain.scoring import ScoringWeights
from elephantasm.runtime import Runtime
from elephantasm.services.packs import candidates as cands
from elephantasm.services.packs import compiler, sql, topk
from elephantasm.services.packs.reads import snapshot_transaction
from elephantasm.services.packs.service import build_request
from tests.conftest import Tenant
from tests.packs.conftest import FROZEN_NOW

N = 1500
# Deterministic, heavily tied importance/confidence (two decimals), a few out of range; most rows
# older than the arm's recency split (4 half-lives of 72 h), some recent, some undated.
_ROWS = """
INSERT INTO memories (id, org_id, anima_id, summary, importance, confidence, state, time_start, time_end,
                      created_at, updated_at)
SELECT gen_random_uuid(), :org, :anima, 'memory ' || i,
       CASE WHEN i % 97 = 0 THEN 1.2 WHEN i % 89 = 0 THEN -0.1 ELSE ((i * 7919) % 101) / 100.0 END,
       CASE WHEN i % 83 = 0 THEN 1.5 ELSE ((i * 104729) % 41) / 40.0 END,
       'active', t, t, coalesce(t, :now), coalesce(t, :now)
FROM generate_series(1, :n) AS i,
     LATERAL (SELECT CASE WHEN i % 61 = 0 THEN NULL
                          ELSE CAST(:now AS timestamptz) - make_interval(hours => (i * 37) % 8760) END AS t) x
"""

WEIGHTS = {
    "conversational": ScoringWeights(importance=0.25, confidence=0.10, recency=0.0, decay=0.0, relevance=1.4),
    "recent": ScoringWeights(importance=0.15, confidence=0.05, recency=0.0, decay=0.0, relevance=0.25),
    "confidence first": ScoringWeights(importance=0.2, confidence=0.3, recency=0.0, decay=0.0, relevance=1.0),
    "no importance": ScoringWeights(importance=0.0, confidence=0.3, recency=0.0, decay=0.0, relevance=1.0),
    "with recency": ScoringWeights(importance=0.25, confidence=0.10, recency=0.25, decay=0.0, relevance=1.4),
}


def _statement(key: str | None) -> Any:
    # A large anima's statement (_load flips it): the pack indexes hold large animas' rows only.
    return text(
        topk.top_k_union(
            # As the compile writes it (candidates._long_term): the arms test the anima alone, so they
            # can be index-only scans of the covering pack indexes; the org is tested on the rows read.
            topk.Source(
                "memories",
                "m",
                f"{sql.MEMORY_ALIVE_OF_ANIMA} AND m.id <> ALL(:exclude){vector_rows_sql('m', True)}",
                sql.MEMORY_FACTORS_NO_DECAY,
                sql.memory_columns(False),
                happened=sql.MEMORY_HAPPENED,
                row_join=sql.MEMORY_RECALLS,
                key=key,
                owner=sql.MEMORY_OWNER,
            ),
            False,
        )
    )


KEYED, PLAIN = _statement(sql.MEMORY_SCORE_KEY), _statement(None)


async def _load(rt: Runtime, tenant: Tenant, anima: uuid.UUID) -> None:
    async with rt.engine.begin() as conn:
        # Large: its rows in the pack indexes, whose arms are what these tests compare.
        # Flagged before the insert, so the trigger marks the rows (as a large anima's dreamer writes
        # them): a flip's update would leave every page not all-visible, and index-only scans costly,
        # until a vacuum.
        await conn.execute(text("UPDATE animas SET vectors_indexed = true WHERE id = :a"), {"a": anima})
        await conn.execute(text(_ROWS), {"org": tenant.org_id, "anima": anima, "now": FROZEN_NOW, "n": N})
    # VACUUM as well as ANALYZE: until the visibility map marks the new pages all-visible, an
    # index-only scan costs a heap fetch per row, and under a full suite's load the planner then
    # preferred bitmap heap scans through the anima btree, so the plan test's index never showed.
    async with rt.engine.connect() as conn:
        conn = await conn.execution_options(isolation_level="AUTOCOMMIT")
        await conn.execute(text("VACUUM (ANALYZE) memories"))


@pytest.mark.parametrize("name", WEIGHTS)
async def test_keyed_arm_returns_the_rows_of_the_plain_arm(
    pack_runtime: Runtime, tenant: Tenant, panima: dict, name: str
) -> None:
    rt, anima = pack_runtime, uuid.UUID(panima["id"])
    await _load(rt, tenant, anima)
    scope = cands.Scope(tenant.org_id, anima, FROZEN_NOW, "q", None, WEIGHTS[name], PackConfig())
    for k in (3, 40, 160):
        params = scope.params(exclude=[], **cands._pruning(scope, k))
        async with snapshot_transaction(rt.engine) as conn:
            keyed = [r["id"] for r in await fetch(conn, KEYED, params)]
            plain = [r["id"] for r in await fetch(conn, PLAIN, params)]
        assert keyed == plain, (name, k)
        assert len(plain) >= min(k, N)


async def test_keyed_arm_reads_the_score_index(pack_runtime: Runtime, tenant: Tenant, panima: dict) -> None:
    """The plan walks ``ix_memories_pack_score`` for the older rows (not the importance index)."""
    rt, anima = pack_runtime, uuid.UUID(panima["id"])
    await _load(rt, tenant, anima)
    scope = cands.Scope(tenant.org_id, anima, FROZEN_NOW, "q", None, WEIGHTS["conversational"], PackConfig())
    params = scope.params(exclude=[], **cands._pruning(scope, 40))
    explain = text(f"EXPLAIN {KEYED.text}")
    async with rt.engine.connect() as conn:
        # What is checked is that the key arm is written so the score index can answer it. Bitmap
        # scans off: the shared test table's statistics (thousands of other tests' rows) once made a
        # bitmap heap scan through the anima btree look cheaper for this 1,500-row anima.
        await conn.execute(text("SET LOCAL enable_bitmapscan = off"))
        plan = "\n".join(r[0] for r in (await conn.execute(explain, params)).all())
    assert plan.count("ix_memories_pack_score") == 2, plan  # the key's k rows, then its range


def _plain_long_term(has_query: bool, dim: int | None, decay: bool, indexed: bool) -> Any:
    """``candidates._long_term`` as it was before the key: the importance arm over every row above the cut."""
    return text(
        topk.top_k_union(
            topk.Source(
                "memories",
                "m",
                f"{sql.MEMORY_ALIVE} AND m.id <> ALL(:exclude){vector_rows_sql('m', indexed)}",
                sql.MEMORY_FACTORS if decay else sql.MEMORY_FACTORS_NO_DECAY,
                sql.memory_columns(has_query),
                happened=sql.MEMORY_HAPPENED,
                score_join=sql.MEMORY_RECALLS if decay else "",
                row_join=sql.MEMORY_RECALLS,
            ),
            has_query,
            dim,
        )
    )


async def _packs(rt: Runtime, tenant: Tenant, anima: uuid.UUID) -> list[tuple[str, str]]:
    out = []
    for query, preset, tokens in REQUESTS:
        req = build_request(
            rt.packs, tenant.org_id, anima, query=query, preset=preset, max_tokens=tokens, as_of=FROZEN_NOW
        )
        pack = await compiler.compile_pack(rt.packs, req)
        body = {k: v for k, v in json.loads(pack.body).items() if k not in ("id", "compiled_at", "created_at")}
        out.append((pack.fingerprint, json.dumps(body, sort_keys=True)))
    return out


REQUESTS = [
    ("memory 42 and the budget", None, 4000),
    ("memory 7", "important", 2000),
    ("memory 1200 recently", None, 1000),
    ("memory 3", "recent", 500),
    (None, None, 4000),
]


async def test_packs_are_the_same_with_and_without_the_key(
    pack_runtime: Runtime, tenant: Tenant, panima: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whole packs (fingerprint and wire bytes) compiled with the keyed statement and with the plain one."""
    rt, anima = pack_runtime, uuid.UUID(panima["id"])
    await _load(rt, tenant, anima)
    keyed = await _packs(rt, tenant, anima)
    monkeypatch.setattr(cands, "_long_term", _plain_long_term)
    assert await _packs(rt, tenant, anima) == keyed
    assert all(json.loads(body)["long_term_memory_count"] > 0 for _, body in keyed)
