"""Exact knowledge vector search for small animas, HNSW for large ones.

Knowledge follows memories (tests/test_exact_vectors.py): its rows enter the HNSW
index (``vector_indexed``) only once the anima is flipped (``animas.vectors_indexed``); the flip
marks the anima's knowledge too, later inserts copy the flag (trigger). The compile's knowledge
statement and ``search_knowledge`` read a flipped anima through the index and scan a small anima's
own rows exactly (an anima-keyed btree, never the whole table).

Runs on a database of its own (it reads plans).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from sqlalchemy import text

from elephantasm.db.vectors import vector_literal
from elephantasm.runtime import Runtime
from elephantasm.services.dreams.queries import search_knowledge
from elephantasm.services.packs import build_request, compile_pack
from elephantasm.services.packs import candidates as cands
from elephantasm.settings import Settings
from tests.conftest import Tenant, make_tenant
from tests.packs.helpers import dream_lisbon_turns
from tests.support.databases import own_runtime
from tests.support.vector_animas import DIM, SPACE, flip, new_anima, random_vectors
from tests.support.vector_animas import flags as row_flags

_LOAD = text("""INSERT INTO knowledge (id, org_id, anima_id, type, content, content_hash, embedding, embedding_space)
VALUES (gen_random_uuid(), :org, :anima, 'FACT', 'fact', md5(random()::text), CAST(:v AS halfvec), :space)""")
# Many rows of random vectors in one statement (the correlated ``g > 0`` draws new ones per row).
_BULK = text("""INSERT INTO knowledge (id, org_id, anima_id, type, content, content_hash, embedding, embedding_space)
SELECT gen_random_uuid(), :org, :anima, 'FACT', 'fact ' || g, md5(g::text),
       CAST(CAST(ARRAY(SELECT random() - 0.5 FROM generate_series(1, 256) WHERE g > 0) AS vector) AS halfvec), :space
FROM generate_series(1, :n) g""")


@pytest.fixture
async def rt(pg_url: str, settings: Settings) -> AsyncIterator[Runtime]:
    async with own_runtime(pg_url, settings, "exactk") as runtime:
        yield runtime


async def _load(rt: Runtime, tenant: Tenant, anima: uuid.UUID, n: int, seed: int) -> None:
    async with rt.engine.begin() as conn:
        for v in random_vectors(n, seed):
            await conn.execute(_LOAD, {"org": tenant.org_id, "anima": anima, "v": vector_literal(v), "space": SPACE})


async def _flags(rt: Runtime, anima: uuid.UUID) -> dict[bool, int]:
    return await row_flags(rt, "knowledge", anima)


async def _plan(rt: Runtime, tenant: Tenant, anima: uuid.UUID, indexed: bool, *, hnsw_only: bool) -> str:
    """EXPLAIN of the compile's knowledge statement with a query, on the HNSW or the exact path."""
    cfg = build_request(rt.packs, tenant.org_id, anima, query="fact", max_tokens=2000).config
    scope = cands.Scope(tenant.org_id, anima, rt.clock(), "fact", vector_literal(random_vectors(1, 99)[0]),
                        cfg.weights, cfg, SPACE, DIM, indexed)  # fmt: skip
    params = scope.params(k=20, kth=19, seed=200, t_cut=rt.clock() - timedelta(days=30))
    stmt = cands._knowledge_statement(True, DIM, indexed)
    async with rt.engine.connect() as conn:
        if hnsw_only:  # tiny tables: price the alternatives out, as tests/test_vector_widths.py does
            await conn.execute(text("SET enable_seqscan = off"))
            await conn.execute(text("SET enable_sort = off"))
        return "\n".join((await conn.execute(text("EXPLAIN " + stmt.text), params)).scalars())


async def test_small_anima_scans_its_knowledge_exactly_flipped_anima_reads_hnsw(rt: Runtime) -> None:
    tenant = await make_tenant(rt, "exactk")
    small, large = await new_anima(rt, tenant), await new_anima(rt, tenant)
    await _load(rt, tenant, small, 30, seed=1)
    async with rt.engine.begin() as conn:  # a table large enough that a scan of it is not the cheap plan
        await conn.execute(_BULK, {"org": tenant.org_id, "anima": large, "space": SPACE, "n": 3000})
    assert await flip(rt, tenant, large, threshold=0) is True  # no memories needed at threshold 0
    assert await _flags(rt, small) == {False: 30}
    assert await _flags(rt, large) == {True: 3000}
    async with rt.engine.begin() as conn:
        await conn.execute(text("ANALYZE knowledge"))

    exact = await _plan(rt, tenant, small, False, hnsw_only=False)
    assert "hnsw" not in exact, exact
    assert "Seq Scan on knowledge" not in exact, exact  # the anima's rows through an anima-keyed btree
    assert "ix_knowledge_embedding_hnsw256" in await _plan(rt, tenant, large, True, hnsw_only=True)
    # The exact statement cannot use the index even when everything else is priced out.
    assert "hnsw" not in await _plan(rt, tenant, large, False, hnsw_only=True)


async def test_search_knowledge_is_exact_for_a_small_anima_and_finds_a_flipped_animas_rows(rt: Runtime) -> None:
    tenant, other = await make_tenant(rt, "exactk"), await make_tenant(rt, "other")
    small, large, foreign = await new_anima(rt, tenant), await new_anima(rt, tenant), await new_anima(rt, other)
    await _load(rt, tenant, small, 50, seed=3)
    await _load(rt, tenant, large, 50, seed=3)
    await _load(rt, other, foreign, 50, seed=3)  # the same vectors in another org
    assert await flip(rt, tenant, large, threshold=0) is True
    q = random_vectors(1, 5)[0]
    async with rt.unit_of_work() as session:
        found = await search_knowledge(session, tenant.org_id, small, q, 10, space=SPACE)
        found_large = await search_knowledge(session, tenant.org_id, large, q, 10, space=SPACE)
    async with rt.engine.connect() as conn:
        truth = (await conn.execute(text(
            "SELECT id FROM knowledge WHERE anima_id = :a ORDER BY embedding <=> CAST(:q AS halfvec), id LIMIT 10"
        ), {"a": small, "q": vector_literal(q)})).scalars().all()  # fmt: skip
    assert [row.id for row, _ in found] == list(truth)
    assert all(row.anima_id == small for row, _ in found)
    assert len(found_large) == 10 and all(row.anima_id == large for row, _ in found_large)
    # The same vectors: the index path ranks the flipped anima's rows as the exact one does.
    assert [s for _, s in found_large] == pytest.approx([s for _, s in found], abs=1e-3)


async def test_flip_marks_the_animas_knowledge_and_the_trigger_later_inserts(rt: Runtime) -> None:
    tenant, other = await make_tenant(rt, "exactk"), await make_tenant(rt, "other")
    anima, bystander = await new_anima(rt, tenant), await new_anima(rt, other)
    await _load(rt, tenant, anima, 3, seed=6)
    await _load(rt, other, bystander, 2, seed=7)
    assert await flip(rt, tenant, bystander, threshold=0) is False  # another org's anima: never
    assert await flip(rt, tenant, anima, threshold=0) is True
    assert await _flags(rt, anima) == {True: 3}
    await _load(rt, tenant, anima, 2, seed=8)
    assert await _flags(rt, anima) == {True: 5}
    assert await _flags(rt, bystander) == {False: 2}
    await _load(rt, other, bystander, 1, seed=9)
    assert await _flags(rt, bystander) == {False: 3}


async def test_the_dreamers_knowledge_of_a_flipped_anima_is_indexed_and_served(
    rt: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("elephantasm.db.size_switches.MEMORY_THRESHOLD", 1)
    tenant = await make_tenant(rt, "exactk")
    anima = await new_anima(rt, tenant)
    await dream_lisbon_turns(rt, tenant.org_id, anima)
    flags = await _flags(rt, anima)
    assert set(flags) == {True}, flags
    compiled = await compile_pack(
        rt.packs, build_request(rt.packs, tenant.org_id, anima, query="Lisbon", max_tokens=2000)
    )
    assert compiled.pack.content.knowledge  # the HNSW path serves the anima's knowledge


async def test_search_knowledge_of_a_flipped_anima_reads_only_its_indexed_rows(rt: Runtime) -> None:
    """The statement carries the HNSW predicate (``vector_indexed``) exactly when the anima is
    flipped: a row left unmarked (as none is in practice) is invisible to it, and visible again on
    the exact path once the anima is treated as small."""
    tenant = await make_tenant(rt, "exactk")
    anima = await new_anima(rt, tenant)
    await _load(rt, tenant, anima, 5, seed=10)
    q = random_vectors(1, 11)[0]
    async with rt.engine.begin() as conn:
        await conn.execute(text("UPDATE animas SET vectors_indexed = true WHERE id = :a"), {"a": anima})
        await conn.execute(text("UPDATE knowledge SET vector_indexed = true WHERE anima_id = :a"), {"a": anima})
        hidden = (await conn.execute(text("UPDATE knowledge SET vector_indexed = false WHERE id = "
                                          "(SELECT id FROM knowledge WHERE anima_id = :a ORDER BY id LIMIT 1) RETURNING id"),
                                     {"a": anima})).scalar_one()  # fmt: skip
    async with rt.unit_of_work() as session:
        flipped = [row.id for row, _ in await search_knowledge(session, tenant.org_id, anima, q, 10, space=SPACE)]
    async with rt.engine.begin() as conn:
        await conn.execute(text("UPDATE animas SET vectors_indexed = false WHERE id = :a"), {"a": anima})
    async with rt.unit_of_work() as session:
        exact = [row.id for row, _ in await search_knowledge(session, tenant.org_id, anima, q, 10, space=SPACE)]
    assert len(flipped) == 4 and hidden not in flipped
    assert len(exact) == 5 and hidden in exact
