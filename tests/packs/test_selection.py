"""What gets chosen: relevance vs recency, candidates from all memories, the pruned top-k is exact."""

from __future__ import annotations

import random
import uuid
from datetime import timedelta

import httpx
import pytest
from sqlalchemy import text

from elephantasm.domain.presets import PackConfig, get_preset
from elephantasm.domain.scoring import score_candidate
from elephantasm.runtime import Runtime
from elephantasm.services import packs as svc
from elephantasm.services.packs import candidates as cands
from elephantasm.services.packs import topk
from tests.conftest import Tenant
from tests.packs.conftest import FROZEN_NOW
from tests.packs.helpers import add_memory
from tests.packs.helpers import compile_json as _compile

OLD_RELEVANT = "The user's favourite drink is jasmine green tea."
RECENT = [
    "Reviewed the quarterly roadmap.",
    "Fixed the login bug.",
    "Booked the Berlin offsite.",
    "Drafted the release notes.",
    "Planned the team lunch.",
]


async def test_relevance_beats_recency_when_weighted_so(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    await add_memory(pack_runtime, tenant, panima["id"], OLD_RELEVANT, time_end=FROZEN_NOW - timedelta(days=90))
    for i, summary in enumerate(RECENT):
        await add_memory(pack_runtime, tenant, panima["id"], summary, time_end=FROZEN_NOW - timedelta(hours=i + 1))
    base = {"anima_id": panima["id"], "query": "what drink does the user like?", "limits": {"long_term": 1}}
    by_relevance = await _compile(
        pclient,
        tenant,
        {**base, "weights": {"relevance": 1.0, "recency": 0.05, "importance": 0.05, "confidence": 0.05, "decay": 0.05}},
    )
    by_recency = await _compile(
        pclient,
        tenant,
        {**base, "weights": {"relevance": 0.05, "recency": 1.0, "importance": 0.05, "confidence": 0.05, "decay": 0.05}},
    )
    assert [m["summary"] for m in by_relevance["content"]["long_term_memories"]] == [OLD_RELEVANT]
    assert [m["summary"] for m in by_recency["content"]["long_term_memories"]] == [RECENT[0]]
    top = by_relevance["content"]["long_term_memories"][0]
    assert top["breakdown"]["relevance"] > 0.2 and top["similarity"] > 0.2
    assert "relevance" in top["reason"]


async def test_without_a_query_the_four_factors_reach_old_memories(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    """Not the newest few: an old, important, well-corroborated memory beats 40 newer trivial ones."""
    old = await add_memory(
        pack_runtime,
        tenant,
        panima["id"],
        "The user is severely allergic to peanuts.",
        time_end=FROZEN_NOW - timedelta(days=400),
        importance=1.0,
        confidence=1.0,
    )
    for i in range(40):
        await add_memory(
            pack_runtime,
            tenant,
            panima["id"],
            f"Small talk number {i}.",
            time_end=FROZEN_NOW - timedelta(days=30, hours=i),
            importance=0.1,
            confidence=0.3,
        )
    pack = await _compile(
        pclient, tenant, {"anima_id": panima["id"], "preset": "important", "limits": {"long_term": 3}}
    )
    ids = [m["id"] for m in pack["content"]["long_term_memories"]]
    assert ids[0] == str(old) and len(ids) == 3
    assert pack["query"] is None and pack["content"]["long_term_memories"][0]["breakdown"]["relevance"] == 0.0


async def test_compile_body_overrides_and_as_of(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    await add_memory(pack_runtime, tenant, panima["id"], "An ordinary memory.", time_end=FROZEN_NOW - timedelta(days=1))
    body = {
        "anima_id": panima["id"],
        "include_identity": False,
        "include_temporal": False,
        "max_tokens": 300,
        "encoding": "cl100k_base",
        "as_of": (FROZEN_NOW + timedelta(days=7)).isoformat(),
    }
    pack = await _compile(pclient, tenant, body)
    assert pack["context"].startswith("## Long-term memories") and pack["content"]["identity"] is None
    assert pack["as_of"].startswith((FROZEN_NOW + timedelta(days=7)).strftime("%Y-%m-%dT%H:00:00"))
    assert pack["max_tokens"] == 300 and pack["encoding"] == "cl100k_base"
    dropped = await _compile(pclient, tenant, {**body, "min_score": 0.99})
    assert dropped["long_term_memory_count"] == 0 and dropped["context"] == ""
    r = await pclient.post(
        "/api/packs/compile",
        json={**body, "weights": {"importance": 0, "confidence": 0, "recency": 0, "decay": 0}},
        headers=tenant.headers,
    )
    assert r.status_code == 422 and "weight" in r.text


async def _importance_cut(runtime: Runtime, scope: cands.Scope, k: int) -> float:
    """The importance bound the pruned arm computes (to check that it really prunes)."""
    arms = topk.factor_arms(
        "memories",
        "m",
        cands.sql.MEMORY_ALIVE,
        cands.sql.MEMORY_FACTORS,
        cands.sql.MEMORY_HAPPENED,
        cands.sql.MEMORY_RECALLS,
    )
    ctes = ", ".join(f"{name} AS MATERIALIZED ({sql})" for name, sql in arms[:2])
    params = scope.params(**cands._pruning(scope, k))
    async with runtime.engine.connect() as conn:
        return (await conn.execute(text(f"WITH {ctes} SELECT imp FROM mcut"), params)).scalar_one()


@pytest.mark.parametrize(("seed", "seed_rows"), [(1, 10), (2, 10), (3, 200)])
async def test_pruned_top_k_equals_brute_force(
    pack_runtime: Runtime, tenant: Tenant, panima: dict, seed: int, seed_rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index-pruned four-factor arm returns a superset of the exact top k (topk module doc)."""
    monkeypatch.setattr(topk, "SEED_ROWS", seed_rows)  # 10: a weak seed; pruning must stay exact anyway
    rng = random.Random(seed)
    anima = uuid.UUID(panima["id"])
    rows = []
    for i in range(150):
        when = FROZEN_NOW - timedelta(hours=rng.uniform(0, 24 * 60))
        recalled = when + timedelta(hours=rng.uniform(0, 48)) if rng.random() < 0.3 else None
        rows.append(
            {
                "id": uuid.uuid4(),
                "org": tenant.org_id,
                "anima": anima,
                "s": f"m{i}",
                "imp": rng.random(),
                "conf": rng.random(),
                "t": when if rng.random() > 0.05 else None,
                "rc": rng.randint(0, 4),
                "lr": recalled,
                "c": when or FROZEN_NOW,
            }
        )
    async with pack_runtime.engine.begin() as conn:
        await conn.execute(
            text(
                "INSERT INTO memories (id, org_id, anima_id, summary, importance, confidence, state, time_start, time_end, "
                "created_at, updated_at) VALUES (:id, :org, :anima, :s, :imp, :conf, 'active', :t, :t, :c, :c)"
            ),
            rows,
        )
        await conn.execute(
            text(
                "INSERT INTO memory_recalls (memory_id, org_id, anima_id, recall_count, last_recalled_at) "
                "VALUES (:id, :org, :anima, :rc, :lr)"
            ),
            [r for r in rows if r["rc"] or r["lr"]],
        )
        await conn.execute(text("ANALYZE memories"))
    for preset in ("conversational", "recent", "important"):
        config = get_preset(preset)
        scope = cands.Scope(tenant.org_id, anima, FROZEN_NOW, None, None, config.weights, config)
        async with pack_runtime.engine.connect() as conn:
            got = {c.id for c in await cands.long_term_memories(conn, scope, 10, [])}
        cut = await _importance_cut(pack_runtime, scope, 10)
        if preset == "important":
            assert cut > 0, "the bound should prune low-importance old memories here"

        def score(r: dict, config: PackConfig = config) -> float:
            return score_candidate(
                as_of=FROZEN_NOW,
                weights=config.weights,
                recency_half_life_seconds=config.recency_half_life_seconds,
                decay_half_life_seconds=config.decay_half_life_seconds,
                decay_growth=config.decay_growth,
                importance=r["imp"],
                confidence=r["conf"],
                happened_at=r["t"],
                last_recalled_at=r["lr"],
                created_at=r["c"],
                recall_count=r["rc"],
            ).score

        best = sorted(rows, key=lambda r: (-score(r), r["id"]))
        cutoff = score(best[9]) + 1e-6  # ties at the boundary may go either way
        assert {r["id"] for r in best if score(r) > cutoff} <= got, preset
        assert len(got) >= 10


async def test_build_request_validates(pack_runtime: Runtime, tenant: Tenant) -> None:
    from elephantasm.domain.errors import ValidationError

    for kwargs in ({"max_tokens": 100}, {"preset": "x"}, {"encoding": "x"}, {"overrides": {"decay_growth": 0.5}}):
        with pytest.raises(ValidationError):
            svc.build_request(pack_runtime.packs, tenant.org_id, uuid.uuid4(), **kwargs)
