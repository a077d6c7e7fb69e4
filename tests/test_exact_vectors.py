"""Exact vector search for small animas, HNSW for large ones.

An anima's memories enter the HNSW index (``vector_indexed``) only once it holds
``size_switches.MEMORY_THRESHOLD`` live memories: the dreamer flips the anima and all its rows, later
inserts copy the flag (trigger). Readers pick the HNSW statement for a flipped anima and an exact
scan of the anima's rows (through an anima-keyed btree, never the whole table) otherwise.

Runs on a database of its own (it loads thousands of rows and reads plans).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from sqlalchemy import text

from elephantasm.db.size_switches import MEMORY_THRESHOLD as INDEX_THRESHOLD
from elephantasm.db.vectors import vector_literal
from elephantasm.runtime import Runtime
from elephantasm.services.dreams.memories import search_memories
from elephantasm.services.packs import build_request, compile_pack
from elephantasm.services.packs import candidates as cands
from elephantasm.settings import Settings
from tests.conftest import Tenant, make_tenant
from tests.packs.helpers import dream_lisbon_turns
from tests.support.databases import own_runtime
from tests.support.vector_animas import DIM, SPACE, flip, new_anima, random_vectors
from tests.support.vector_animas import flags as row_flags

_LOAD = text("""INSERT INTO memories (id, org_id, anima_id, summary, embedding, embedding_space, time_end)
SELECT gen_random_uuid(), :org, :anima, 'memory ' || g, CAST(:v AS halfvec), :space, now() - make_interval(hours => g)
FROM generate_series(1, :n) g""")


@pytest.fixture
async def rt(pg_url: str, settings: Settings) -> AsyncIterator[Runtime]:
    async with own_runtime(pg_url, settings, "exact") as runtime:
        yield runtime


async def _load(rt: Runtime, tenant: Tenant, anima: uuid.UUID, n: int, seed: int) -> None:
    """``n`` memories with distinct random vectors (one statement per vector: loads are small)."""
    async with rt.engine.begin() as conn:
        for v in random_vectors(n, seed):
            params = {"org": tenant.org_id, "anima": anima, "v": vector_literal(v), "space": SPACE, "n": 1}
            await conn.execute(_LOAD, params)


async def _flags(rt: Runtime, anima: uuid.UUID) -> dict[bool, int]:
    return await row_flags(rt, "memories", anima)


async def _plan(rt: Runtime, tenant: Tenant, anima: uuid.UUID, indexed: bool, *, hnsw_only: bool) -> str:
    """EXPLAIN of the compile's long-term statement with a query, on the HNSW or the exact path."""
    cfg = build_request(rt.packs, tenant.org_id, anima, query="memory", max_tokens=2000).config
    scope = cands.Scope(
        tenant.org_id,
        anima,
        rt.clock(),
        "memory",
        vector_literal(random_vectors(1, 99)[0]),
        cfg.weights,
        cfg,
        SPACE,
        DIM,
        indexed,
    )
    params = scope.params(exclude=[], k=20, kth=19, seed=200, t_cut=rt.clock() - timedelta(days=30))
    stmt = cands._long_term(True, DIM, scope.uses_decay, indexed)
    async with rt.engine.connect() as conn:
        if hnsw_only:  # tiny tables: price the alternatives out, as tests/test_vector_widths.py does
            await conn.execute(text("SET enable_seqscan = off"))
            await conn.execute(text("SET enable_sort = off"))
        return "\n".join((await conn.execute(text("EXPLAIN " + stmt.text), params)).scalars())


async def test_small_anima_scans_its_own_rows_exactly_large_anima_reads_hnsw(rt: Runtime) -> None:
    tenant = await make_tenant(rt, "exact")
    small, large = await new_anima(rt, tenant), await new_anima(rt, tenant)
    await _load(rt, tenant, small, 30, seed=1)
    await _load(rt, tenant, large, INDEX_THRESHOLD, seed=2)
    assert await flip(rt, tenant, small) is False
    assert await flip(rt, tenant, large) is True
    assert await _flags(rt, small) == {False: 30}
    assert await _flags(rt, large) == {True: INDEX_THRESHOLD}
    async with rt.engine.begin() as conn:
        await conn.execute(text("ANALYZE memories"))

    exact = await _plan(rt, tenant, small, False, hnsw_only=False)
    assert "hnsw" not in exact, exact
    assert "Seq Scan on memories" not in exact, exact  # the anima's rows through an anima-keyed btree
    assert "ix_memories_embedding_hnsw256" in await _plan(rt, tenant, large, True, hnsw_only=True)
    # The exact statement cannot use the index even when everything else is priced out.
    assert "hnsw" not in await _plan(rt, tenant, large, False, hnsw_only=True)


async def test_exact_search_of_a_small_anima_is_the_true_order_and_stays_in_its_tenant(rt: Runtime) -> None:
    tenant, other = await make_tenant(rt, "exact"), await make_tenant(rt, "other")
    small, foreign = await new_anima(rt, tenant), await new_anima(rt, other)
    await _load(rt, tenant, small, 50, seed=3)
    await _load(rt, other, foreign, 50, seed=4)
    q = random_vectors(1, 5)[0]
    async with rt.unit_of_work() as session:
        found = await search_memories(session, tenant.org_id, small, q, 10, space=SPACE)
    async with rt.engine.connect() as conn:
        truth = (
            (
                await conn.execute(
                    text(
                        "SELECT id FROM memories WHERE anima_id = :a ORDER BY embedding <=> CAST(:q AS halfvec), id LIMIT 10"
                    ),
                    {"a": small, "q": vector_literal(q)},
                )
            )
            .scalars()
            .all()
        )
    assert [row.id for row, _ in found] == list(truth)
    assert all(row.anima_id == small for row, _ in found)


async def test_flip_indexes_every_memory_of_the_anima_and_later_inserts(rt: Runtime) -> None:
    tenant, other = await make_tenant(rt, "exact"), await make_tenant(rt, "other")
    anima, bystander = await new_anima(rt, tenant), await new_anima(rt, other)
    await _load(rt, tenant, anima, 3, seed=6)
    await _load(rt, other, bystander, 5, seed=7)
    assert await flip(rt, tenant, anima, threshold=4) is False
    assert await _flags(rt, anima) == {False: 3}
    # Another org's anima id with this org: never flipped, whatever its size.
    assert await flip(rt, tenant, bystander, threshold=1) is False
    await _load(rt, tenant, anima, 1, seed=8)
    assert await flip(rt, tenant, anima, threshold=4) is True
    assert await _flags(rt, anima) == {True: 4}
    await _load(rt, tenant, anima, 2, seed=9)  # the trigger copies the anima's flag
    assert await _flags(rt, anima) == {True: 6}
    assert await flip(rt, tenant, anima, threshold=4) is False  # once
    assert await _flags(rt, bystander) == {False: 5}
    async with rt.engine.connect() as conn:
        flags = dict(
            (
                await conn.execute(
                    text("SELECT id, vectors_indexed FROM animas WHERE id IN (:a, :b)"), {"a": anima, "b": bystander}
                )
            ).all()
        )
    assert flags == {anima: True, bystander: False}


async def test_the_dreamer_flips_an_anima_at_the_threshold(rt: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("elephantasm.db.size_switches.MEMORY_THRESHOLD", 1)
    tenant = await make_tenant(rt, "exact")
    anima = await new_anima(rt, tenant)
    await dream_lisbon_turns(rt, tenant.org_id, anima)
    flags = await _flags(rt, anima)
    assert set(flags) == {True}, flags
    compiled = await compile_pack(
        rt.packs, build_request(rt.packs, tenant.org_id, anima, query="Lisbon", max_tokens=2000)
    )
    assert compiled.memory_ids  # the HNSW path serves the anima's memories
