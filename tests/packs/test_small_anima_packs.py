"""A small anima's packs come from its rows read through an anima-keyed btree; a large one's from the
partial indexes, and the packs are byte for byte the same either way.

The pack and full-text indexes of memories and knowledge hold the rows of large animas only
(``vector_indexed``). A small anima's long-term and knowledge statements run the pruned arms over its
rows through an anima-keyed btree (``services/packs/topk.py``); after the flip they read the indexes.
Both return the rows of the brute-force reference (``tests/packs/exhaustive_reference.py``). Here
the same anima is compiled small, flipped, and compiled again: every pack
(queries and none, every preset, small and large budgets, recall state, ties, undated, archived,
deleted and superseded rows) must be identical, and the plans must read what they say.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import random
import uuid
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import insert, text

from elephantasm.db import size_switches
from elephantasm.db.driver_fetch import fetch
from elephantasm.db.models import Knowledge, Memory, MemoryRecall
from elephantasm.db.vectors import vector_literal
from elephantasm.domain.lean import lean_text
from elephantasm.domain.presets import PackConfig
from elephantasm.domain.scoring import ScoringWeights
from elephantasm.runtime import Runtime
from elephantasm.services.animas import bump_state_version
from elephantasm.services.dreams import knowledge as dream_knowledge
from elephantasm.services.packs import candidates as cands
from elephantasm.services.packs import compiler, topk
from elephantasm.services.packs.service import build_request
from elephantasm.services.spaces import current_space
from tests.conftest import Tenant
from tests.packs.conftest import FROZEN_NOW
from tests.packs.exhaustive_reference import exhaustive_union
from tests.packs.helpers import add_memory

WHO = ["the user", "my sister", "our landlord", "the dentist", "a colleague", "the coach"]
DID = ["moved to", "booked a trip to", "talked about", "complained about", "recommended", "bought a flat in"]
WHAT = ["Lisbon", "Porto", "the garden", "chess club", "sourdough bread", "the marathon", "Tallinn", "jazz records"]
WHEN = ["last spring", "on Tuesday", "after work", "during the holidays", "yesterday"]

REQUESTS: list[tuple[str | None, str | None, int]] = [
    ("what did the user say about Lisbon", None, 4000),
    ("sourdough bread and the garden", "important", 2000),
    ("who recommended jazz records", "recent", 500),
    ("chess club marathon Porto Tallinn", "conversational", 1200),
    ("the dentist", None, 300),
    ("the a of", None, 1500),  # stop words only: no full-text arm matches
    (None, None, 4000),
    (None, "recent", 800),
    (None, "important", 2500),
]


def _summary(rng: random.Random) -> str:
    return f"{rng.choice(WHO)} {rng.choice(DID)} {rng.choice(WHAT)} {rng.choice(WHEN)}."


async def _compile_space(rt: Runtime, tenant: Tenant, anima: uuid.UUID) -> Any:
    """The ``embedding_space`` value the compile compares with, as ``add_memory`` stores it (one memory)."""
    mid = await add_memory(rt, tenant, anima, "the user keeps bees", time_end=FROZEN_NOW - timedelta(days=3))
    async with rt.engine.connect() as conn:
        return (await conn.execute(text("SELECT embedding_space FROM memories WHERE id = :m"), {"m": mid})).scalar()


async def _load(
    rt: Runtime,
    tenant: Tenant,
    anima: uuid.UUID,
    vectors: bool = True,
    sizes: tuple[int, int] = (300, 40),
    large: bool = False,
) -> None:
    """Memories and knowledge (``sizes``) of varied, often tied factors, as the dreamer would write
    them; ``vectors``: with vectors in the compile's space (else none: the cosine arm is empty);
    ``large``: the anima is flagged first, so the insert trigger marks the rows."""
    rng = random.Random(23)
    space = await _compile_space(rt, tenant, anima) if vectors else None
    n_memories, n_knowledge = sizes
    summaries = [_summary(rng) for _ in range(n_memories)]
    embedded = await rt.embedder.embed([lean_text(s) for s in summaries]) if vectors else [None] * n_memories
    memories, recalls = [], []
    for i, (summary, vector) in enumerate(zip(summaries, embedded, strict=True)):
        at = None if i % 37 == 0 else FROZEN_NOW - timedelta(hours=rng.choice([1, 5, 30, 200, 900, 4000]))
        mid = uuid.uuid4()
        memories.append(
            {
                "id": mid,
                "org_id": tenant.org_id,
                "anima_id": anima,
                "summary": summary,
                "importance": rng.choice([0.1, 0.3, 0.5, 0.5, 0.7, 0.9]),
                "confidence": rng.choice([0.4, 0.6, 0.8]),
                "state": "archived" if i % 53 == 0 else "active",
                "session_id": f"s{i % 7}",
                "time_start": at,
                "time_end": at,
                "embedding": vector,
                "embedding_space": space,
                "created_at": at or FROZEN_NOW,
                "updated_at": at or FROZEN_NOW,
                "deleted_at": FROZEN_NOW if i % 71 == 0 else None,
            }
        )
        if i % 5 == 0:
            recalls.append(
                {
                    "memory_id": mid,
                    "org_id": tenant.org_id,
                    "anima_id": anima,
                    "recall_count": i % 4,
                    "last_recalled_at": FROZEN_NOW - timedelta(hours=i % 50),
                }
            )
    contents = [f"{rng.choice(WHO)} likes {rng.choice(WHAT)}" for _ in range(n_knowledge)]
    kvectors = await rt.embedder.embed(contents) if vectors else [None] * n_knowledge
    knowledge = [
        {
            "id": uuid.uuid4(),
            "org_id": tenant.org_id,
            "anima_id": anima,
            "type": "FACT",
            "topic": "t",
            "content": c,
            "content_hash": hashlib.sha256(f"{c}{i}".encode()).hexdigest(),
            "importance": rng.choice([0.4, 0.6, 0.8]),
            "confidence": 0.8,
            "embedding": v,
            "embedding_space": space,
            "valid_from": FROZEN_NOW - timedelta(days=i),
            "valid_to": FROZEN_NOW if i % 9 == 0 else None,
        }
        for i, (c, v) in enumerate(zip(contents, kvectors, strict=True))
    ]
    async with rt.unit_of_work() as session:
        if large:
            await session.execute(text("UPDATE animas SET vectors_indexed = true WHERE id = :a"), {"a": anima})
        await session.execute(insert(Memory), memories)
        await session.execute(insert(MemoryRecall), recalls)
        await session.execute(insert(Knowledge), knowledge)
        await bump_state_version(session, [anima])
    async with rt.engine.begin() as conn:
        await conn.execute(text("ANALYZE memories"))
        await conn.execute(text("ANALYZE knowledge"))


async def _packs(
    rt: Runtime, tenant: Tenant, anima: uuid.UUID, requests: list[tuple[str | None, str | None, int]]
) -> list[tuple[str, bytes]]:
    out = []
    for query, preset, tokens in requests:
        req = build_request(
            rt.packs, tenant.org_id, anima, query=query, preset=preset, max_tokens=tokens, as_of=FROZEN_NOW
        )
        pack = await compiler.compile_pack(rt.packs, req)
        body = {k: v for k, v in json.loads(pack.body).items() if k != "compiled_at"}
        out.append((pack.fingerprint, json.dumps(body, sort_keys=True).encode()))
    return out


async def _flags(rt: Runtime, anima: uuid.UUID) -> tuple[bool, set[bool], set[bool]]:
    async with rt.engine.connect() as conn:
        head = (await conn.execute(text("SELECT vectors_indexed FROM animas WHERE id = :a"), {"a": anima})).scalar()
        rows = [
            {
                r[0]
                for r in await conn.execute(
                    text(f"SELECT DISTINCT vector_indexed FROM {t} WHERE anima_id = :a"), {"a": anima}
                )
            }
            for t in ("memories", "knowledge")
        ]
    return bool(head), rows[0], rows[1]


# (memories, knowledge, vectors?, requests): 300 memories (more than the factor arm's seed, so its
# cut prunes) without vectors, so the cosine arm is empty both ways: the flip turns that arm from
# an exact scan into HNSW (approximate), which this test does not compare. 50 memories
# with vectors: every arm's k covers them all, HNSW's too.
CASES = {
    "pruned, no vectors": (300, 40, False, REQUESTS),
    "all rows, vectors": (50, 12, True, [r for r in REQUESTS if r[2] >= 4000] + [("jazz Porto", "recent", 4000)]),
}


@pytest.mark.parametrize("case", CASES)
async def test_packs_are_byte_identical_before_and_after_the_flip(
    pack_runtime: Runtime, tenant: Tenant, panima: dict, case: str
) -> None:
    """Packs of the anima small (its rows through an anima-keyed btree) and flipped large (the partial indexes)."""
    n_memories, n_knowledge, vectors, requests = CASES[case]
    rt, anima = pack_runtime, uuid.UUID(panima["id"])
    await _load(rt, tenant, anima, vectors, (n_memories, n_knowledge))
    assert await _flags(rt, anima) == (False, {False}, {False})
    small = await _packs(rt, tenant, anima, requests)
    async with rt.engine.begin() as conn:
        assert await size_switches.index_vectors_if_large(conn, tenant.org_id, anima, threshold=1)
    assert await _flags(rt, anima) == (True, {True}, {True})
    large = await _packs(rt, tenant, anima, requests)
    for request, before, after in zip(requests, small, large, strict=True):
        assert before == after, request
    served = [json.loads(body) for _, body in small]
    assert all(p["long_term_memory_count"] > 0 for p in served)
    assert sum(p["knowledge_count"] for p in served) > 0


def _scope(tenant: Tenant, anima: uuid.UUID, indexed: bool, query: str | None, qv: str | None) -> cands.Scope:
    weights = ScoringWeights(importance=0.25, confidence=0.10, recency=0.2, decay=0.1, relevance=1.4)
    # No space: nothing is compared (the statement's text, hence its plan shape, is the same).
    return cands.Scope(
        tenant.org_id,
        anima,
        FROZEN_NOW,
        query,
        qv,
        weights,
        PackConfig(),
        None,
        256 if qv else None,
        vectors_indexed=indexed,
    )


async def _plan(rt: Runtime, statement: Any, params: dict[str, Any]) -> str:
    async with rt.engine.connect() as conn:
        rows = await conn.execute(text(f"EXPLAIN {statement.text}"), params)
        return "\n".join(r[0] for r in rows)


@pytest.mark.parametrize("query", [None, "Lisbon garden"])
@pytest.mark.parametrize("large", [False, True])
async def test_small_anima_statement_reads_no_search_index(
    pack_runtime: Runtime, tenant: Tenant, panima: dict, query: str | None, large: bool
) -> None:
    """Small: the anima's memories through an anima-keyed btree, no pack, full-text or HNSW index
    (they do not hold its rows). Large: the pack indexes answer the factor arm."""
    rt, anima = pack_runtime, uuid.UUID(panima["id"])
    await _load(rt, tenant, anima, large=large)
    qv = "[" + ",".join(["0.1"] * 256) + "]" if query else None
    scope = _scope(tenant, anima, large, query, qv)
    params = scope.params(exclude=[], **cands._pruning(scope, 40))
    plan = await _plan(rt, cands._long_term(scope.has_query, scope.dim, scope.uses_decay, large), params)
    if not large:
        assert "ix_memories_pack" not in plan and "ix_memories_fts" not in plan and "hnsw" not in plan, plan
    else:
        assert "ix_memories_pack_happened" in plan and "ix_memories_pack_importance" in plan, plan


@pytest.mark.parametrize("query", [None, "Lisbon garden"])
@pytest.mark.parametrize("decay", [True, False])
async def test_candidate_statements_return_the_brute_force_rows(
    pack_runtime: Runtime, tenant: Tenant, panima: dict, query: str | None, decay: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The long-term and knowledge statements over the table (small: an anima-keyed btree; large: the
    pack, HNSW and full-text indexes) return the rows of the brute-force reference, which scores every
    row once and runs the same arms over them; k below the rows, so the factor arm's cut prunes."""
    rt, anima = pack_runtime, uuid.UUID(panima["id"])
    await _load(rt, tenant, anima, True, (300, 40))
    space = await current_space(rt)
    qv = vector_literal((await rt.embedder.embed([query]))[0]) if query else None
    for large in (False, True):
        if large:
            async with rt.engine.begin() as conn:
                assert await size_switches.index_vectors_if_large(conn, tenant.org_id, anima, threshold=1)
        scope = dataclasses.replace(_scope(tenant, anima, large, query, qv), space=space)
        if not decay:
            scope = dataclasses.replace(
                scope, weights=ScoringWeights(importance=0.25, confidence=0.1, recency=0.0, decay=0.0)
            )
        assert scope.uses_decay == decay
        params = scope.params(exclude=[], **cands._pruning(scope, 40))
        statements = []
        for build in (
            functools.partial(cands._long_term.__wrapped__, scope.has_query, scope.dim, decay, large),
            functools.partial(cands._knowledge_statement.__wrapped__, scope.has_query, scope.dim, large),
        ):
            with monkeypatch.context() as patch:
                got = build()
                patch.setattr(topk, "top_k_union", exhaustive_union)  # the same statement, brute force
                statements.append((got, build()))
        async with rt.engine.begin() as conn:
            # HNSW answers approximately, at most ef_search rows: wide enough here to hold every row.
            await conn.execute(text("SET LOCAL hnsw.ef_search = 1000"))
            for got, want in statements:
                assert "rows AS MATERIALIZED" in want.text and "rows AS MATERIALIZED" not in got.text
                rows = [tuple(r) for r in await fetch(conn, got, params)]
                assert rows == [tuple(r) for r in await fetch(conn, want, params)], (large, got.text[:80])
                assert rows


async def test_new_rows_of_a_flipped_anima_enter_the_indexes(
    pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    """After the flip the insert trigger marks new memories and knowledge large, so the large
    statements (which AND the flag) still see them."""
    rt, anima = pack_runtime, uuid.UUID(panima["id"])
    await _load(rt, tenant, anima)
    async with rt.engine.begin() as conn:
        assert await size_switches.index_vectors_if_large(conn, tenant.org_id, anima, threshold=1)
    await _load(rt, tenant, anima)
    assert await _flags(rt, anima) == (True, {True}, {True})
    sql = "SELECT count(*) FROM memories WHERE anima_id = :a AND vector_indexed AND fts @@ 'lisbon'::tsquery"
    async with rt.engine.connect() as conn:
        assert (await conn.execute(text(sql), {"a": anima})).scalar_one() > 0


async def test_dreamer_hash_lookup_finds_the_same_items_small_and_large(
    pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    """``ix_knowledge_anima_hash`` holds large animas' items only: the dreamer's lookup of
    current items by hash returns the same rows before and after the flip, through that index after."""
    rt, anima = pack_runtime, uuid.UUID(panima["id"])
    await _load(rt, tenant, anima)
    sql = "SELECT content_hash FROM knowledge WHERE anima_id = :a ORDER BY content_hash LIMIT 5"
    async with rt.engine.connect() as conn:
        hashes = [r[0] for r in await conn.execute(text(sql), {"a": anima})]
    got = []
    for flip in (False, True):
        if flip:
            async with rt.engine.begin() as conn:
                assert await size_switches.index_vectors_if_large(conn, tenant.org_id, anima, threshold=1)
        async with rt.unit_of_work() as session:
            rows = await dream_knowledge._load_current(session, anima, hashes, [], [])
        got.append([r.id for r in rows])
    assert got[0] == got[1] and 0 < len(got[0]) <= 5
    lookup = (
        "EXPLAIN SELECT id FROM knowledge WHERE anima_id = :a AND valid_to IS NULL AND deleted_at IS NULL "
        "AND content_hash = ANY(:h) AND vector_indexed"
    )
    async with rt.engine.connect() as conn:
        await conn.execute(text("SET enable_seqscan = off"))
        plan = "\n".join(r[0] for r in await conn.execute(text(lookup), {"a": anima, "h": hashes}))
    assert "ix_knowledge_anima_hash" in plan, plan
