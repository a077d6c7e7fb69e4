"""Vectors are stored at their embedder's own width: the default 256, 384, and a
remote embedder of a width with no HNSW index (exact scan) all work side by side in one database,
and the cosine arm of a pack reads the HNSW index of the query's width.

Runs on a database of its own.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta

import pytest
from sqlalchemy import text

from elephantasm.db.migrate import upgrade_async
from elephantasm.db.vectors import INDEXED_DIMS
from elephantasm.domain.lean import lean_text
from elephantasm.runtime import Runtime, build_runtime
from elephantasm.schemas.animas import AnimaCreate
from elephantasm.services.animas import create_anima
from elephantasm.services.dreams.memories import search_memories
from elephantasm.services.packs import build_request, compile_pack
from elephantasm.services.packs import candidates as cands
from elephantasm.services.spaces import current_space
from elephantasm.settings import Settings
from tests.conftest import Tenant, make_tenant
from tests.packs.helpers import add_memory, dream_lisbon_turns
from tests.support.databases import create_database, drop_database
from tests.support.openai_server import OpenAIServer

UNINDEXED = 512
FACT = "The user keeps bees on the roof of a garage in Porto."


def told(text: str, dim: int) -> str:
    """A line as told to the server of one width: one line per space (a pack serves a line once)."""
    return f"{text[:-1]}, as told to server {dim}."


OTHERS = ["The user plays chess online every Sunday.", "The user is learning to bake rye bread."]


@pytest.fixture
def width_db(pg_url: str) -> Iterator[str]:
    url = create_database(pg_url, "widths")
    yield url
    drop_database(url)


@pytest.fixture
def embeddings_server() -> Iterator[OpenAIServer]:
    server = OpenAIServer().start()
    yield server
    server.stop()


@pytest.fixture
async def runtimes(
    width_db: str, settings: Settings, embeddings_server: OpenAIServer
) -> AsyncIterator[dict[int, Runtime]]:
    """Runtimes over one database, by width: WordLlama (256), hash (384), a remote embedder at 512."""
    await upgrade_async(width_db)
    remote = {
        "embedder": "openai",
        "embedding_base_url": embeddings_server.base_url,
        "embedding_api_key": "test",
        "embedding_dimensions": UNINDEXED,
    }
    rts = {
        256: build_runtime(settings.model_copy(update={"embedder": "wordllama"}), database_url=width_db),
        384: build_runtime(settings.model_copy(update={"embedder": "hash"}), database_url=width_db),
        UNINDEXED: build_runtime(settings.model_copy(update=remote), database_url=width_db),
    }
    yield rts
    for rt in rts.values():
        await rt.close()


async def _anima(rt: Runtime, tenant: Tenant) -> uuid.UUID:
    async with rt.unit_of_work() as session:
        return (await create_anima(session, tenant.org_id, AnimaCreate(name="widths"))).id


async def _widths(rt: Runtime, anima: uuid.UUID) -> dict[str, int]:
    async with rt.engine.connect() as conn:
        rows = await conn.execute(
            text(
                "SELECT s.label, vector_dims(m.embedding) FROM memories m "
                "JOIN embedding_spaces s ON s.id = m.embedding_space WHERE m.anima_id = :a "
                "AND m.embedding IS NOT NULL"
            ),
            {"a": anima},
        )
        return {space: dims for space, dims in rows}


async def test_every_width_is_stored_as_is_and_ranked_within_its_own_space(runtimes: dict[int, Runtime]) -> None:
    """One anima holds vectors of three widths; each server finds its own by cosine and never
    compares (or fails on) the others."""
    tenant = await make_tenant(runtimes[256], "widths")
    anima = await _anima(runtimes[256], tenant)
    when = runtimes[256].clock() - timedelta(days=2)
    assert all(lean_text(told(FACT, d)) == told(FACT, d) for d in runtimes)  # a query embeds to the stored vector
    fact_ids = {}
    for dim, rt in runtimes.items():
        assert rt.embedder.dim == rt.embedder.space.dim == dim
        fact_ids[dim] = await add_memory(rt, tenant, anima, told(FACT, dim), time_end=when)
        for i, other in enumerate(OTHERS):
            await add_memory(rt, tenant, anima, told(other, dim), time_end=when - timedelta(hours=i + 1))
    assert await _widths(runtimes[256], anima) == {rt.embedder.space.label(): d for d, rt in runtimes.items()}

    for dim, rt in runtimes.items():
        req = build_request(rt.packs, tenant.org_id, anima, query=told(FACT, dim), max_tokens=2000)
        long_term = (await compile_pack(rt.packs, req)).pack.model_dump(mode="json")["content"]["long_term_memories"]
        compared = {m["id"]: m["similarity"] for m in long_term if m["similarity"] is not None}
        assert str(fact_ids[dim]) in compared and compared[str(fact_ids[dim])] == pytest.approx(1.0, abs=0.02)
        assert len(compared) == 1 + len(OTHERS), f"{dim}: only its own space is compared"

        (vector,) = await rt.embedder.embed([told(FACT, dim)])
        async with rt.read_session() as session:
            hits = await search_memories(session, tenant.org_id, anima, vector, 10, space=await current_space(rt))
        assert hits[0][0].id == fact_ids[dim] and len(hits) == 1 + len(OTHERS)


async def test_a_remote_embedder_of_an_unindexed_width_dreams_and_curates(runtimes: dict[int, Runtime]) -> None:
    """The dreamer (memories, knowledge dedupe, the sleep pass's neighbours) at a width with no HNSW
    index: an exact scan, same results."""
    rt = runtimes[UNINDEXED]
    tenant = await make_tenant(rt, "widths")
    anima = await _anima(rt, tenant)
    await dream_lisbon_turns(rt, tenant.org_id, anima)
    assert await _widths(rt, anima) == {rt.embedder.space.label(): UNINDEXED}


async def _plan(rt: Runtime, tenant: Tenant, anima: uuid.UUID, dim: int) -> str:
    """EXPLAIN of the long-term candidate statement a compile with a query runs at width ``dim``."""
    cfg = build_request(rt.packs, tenant.org_id, anima, query=FACT, max_tokens=2000).config
    scope = cands.Scope(
        tenant.org_id,
        anima,
        rt.clock(),
        FACT,
        "[" + ",".join(["0.1"] * dim) + "]",
        cfg.weights,
        cfg,
        await current_space(rt),
        dim,
    )
    params = scope.params(exclude=[], k=20, kth=19, seed=200, t_cut=rt.clock() - timedelta(days=30))
    stmt = cands._long_term(True, dim, scope.uses_decay, True)
    async with rt.engine.connect() as conn:
        # Tiny tables: with sorts and heap scans priced out, a plan without the HNSW index means
        # the statement cannot use it (10k-row plans: `python -m benchmarks spaces`).
        await conn.execute(text("SET enable_seqscan = off"))
        await conn.execute(text("SET enable_sort = off"))
        return "\n".join((await conn.execute(text("EXPLAIN " + stmt.text), params)).scalars())


async def test_the_cosine_arm_reads_the_hnsw_index_of_the_query_width(runtimes: dict[int, Runtime]) -> None:
    rt = runtimes[256]
    tenant = await make_tenant(rt, "widths")
    anima = await _anima(rt, tenant)
    for dim in INDEXED_DIMS:
        plan = await _plan(rt, tenant, anima, dim)
        assert f"ix_memories_embedding_hnsw{dim}" in plan, plan
        others = [f"ix_memories_embedding_hnsw{d}" for d in INDEXED_DIMS if d != dim]
        assert not any(o in plan for o in others), plan
    assert "embedding_hnsw" not in await _plan(rt, tenant, anima, UNINDEXED)  # exact scan, no index
