"""Embedding spaces never mix: a server with another embedder than the stored vectors uses full text
only for them, says so in /api/health, and ``reembed`` (resumable, batched) brings vectors back.

Runs on a database of its own, so "nothing left to re-embed" means exactly this test's rows.
"""

from __future__ import annotations

import asyncio
import subprocess
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text

from api.app import create_app
from api.routes.health import reembed_pending
from elephantasm.db.migrate import upgrade_async
from elephantasm.db.vectors import hnsw_distance, width_is
from elephantasm.runtime import Runtime, build_runtime
from elephantasm.schemas.animas import AnimaCreate
from elephantasm.schemas.events import EventCreate
from elephantasm.services.animas import create_anima
from elephantasm.services.dreams import run_dream
from elephantasm.services.events import record_events
from elephantasm.services.packs import build_request, compile_pack
from elephantasm.services.reembed import Progress, ReembedResult, reembed, stale_counts
from elephantasm.services.spaces import current_space
from elephantasm.settings import Settings
from tests.conftest import Tenant, make_tenant
from tests.packs.helpers import add_knowledge, add_memory
from tests.support.cli import run_cli
from tests.support.databases import create_database, drop_database

LISBON = "The user relocated to Lisbon last spring and rents a flat near the river."
DISTRACTORS = [
    "We compared three sourdough recipes and picked the one with the longest proof.",
    "The user's laptop battery drains fast when the video editor is open.",
    "A long talk about which board games work well with only two players.",
    "The user asked how to fix a flaky unit test in the payment service.",
]
QUERY = "Where is the user living these days?"  # no content word but "user" shared with LISBON


@pytest.fixture
def space_db(pg_url: str) -> Iterator[str]:
    url = create_database(pg_url, "spaces")
    yield url
    drop_database(url)


@pytest.fixture
async def runtimes(space_db: str, settings: Settings) -> AsyncIterator[tuple[Runtime, Runtime]]:
    """(A, B) over one database: A embeds with the hash embedder, B with the default (WordLlama)."""
    await upgrade_async(space_db)
    a = build_runtime(settings.model_copy(update={"embedder": "hash"}), database_url=space_db)
    b = build_runtime(settings.model_copy(update={"embedder": "wordllama"}), database_url=space_db)
    yield a, b
    await a.close()
    await b.close()


async def _stale(rt: Runtime, anima: uuid.UUID) -> dict[str, int]:
    async with rt.read_session() as session:
        return await stale_counts(session, await current_space(rt), anima)


async def _reembed(rt: Runtime, anima: uuid.UUID, progress: Progress) -> ReembedResult:
    return await reembed(rt.unit_of_work, rt.embedder, await current_space(rt), anima, batch=2, progress=progress)


async def _anima(rt: Runtime, tenant: Tenant) -> uuid.UUID:
    async with rt.unit_of_work() as session:
        return (await create_anima(session, tenant.org_id, AnimaCreate(name="spaces"))).id


async def _long_term(rt: Runtime, tenant: Tenant, anima: uuid.UUID) -> list[dict]:
    req = build_request(rt.packs, tenant.org_id, anima, query=QUERY, max_tokens=2000)
    return (await compile_pack(rt.packs, req)).pack.model_dump(mode="json")["content"]["long_term_memories"]


async def _health(rt: Runtime) -> dict:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(rt)), base_url="http://t") as c:
        r = await c.get("/api/health")
    assert r.status_code == 200, r.text
    return r.json()["embeddings"]


class Interrupted(Exception):
    pass


async def test_switching_embedder_never_compares_across_spaces_until_reembedded(
    runtimes: tuple[Runtime, Runtime],
) -> None:
    a, b = runtimes
    tenant = await make_tenant(a, "spaces")
    anima = await _anima(a, tenant)
    when = a.clock() - timedelta(days=3)
    lisbon = await add_memory(a, tenant, anima, LISBON, time_end=when)
    for i, summary in enumerate(DISTRACTORS):
        await add_memory(a, tenant, anima, summary, time_end=when - timedelta(hours=i + 1))
    await add_knowledge(a, tenant, anima, "User lives in Lisbon.")
    assert a.embedder.space != b.embedder.space

    # B started on A's vectors: no cosine is computed for them (relevance is full text only).
    before = await _long_term(b, tenant, anima)
    assert before and all(m["similarity"] is None for m in before)
    assert (await _health(b))["reembed_pending"] is True
    assert (await _health(b))["space"] == b.embedder.space.label()
    assert await _stale(b, anima) == {"memories": 5, "knowledge": 1}

    # Interrupted after the first committed batch: those rows moved, the rest still stale.
    def crash(done: int, total: int) -> None:
        if done:
            raise Interrupted

    with pytest.raises(Interrupted):
        await _reembed(b, anima, crash)
    assert await _stale(b, anima) == {"memories": 3, "knowledge": 1}

    # Resumed: only what was left is re-embedded, and vectors are back, ranked by meaning.
    seen: list[tuple[int, int]] = []
    result = await _reembed(b, anima, lambda d, t: seen.append((d, t)))
    assert (result.done, result.remaining, result.space) == (4, 0, b.embedder.space.label())
    assert seen[0] == (0, 4) and seen[-1] == (4, 4)
    after = await _long_term(b, tenant, anima)
    assert all(m["similarity"] is not None for m in after)
    assert after[0]["id"] == str(lisbon)
    assert await reembed_pending(b, max_age=0) is False  # the run was another unit of work: look again
    assert (await _health(b))["reembed_pending"] is False

    # The other way round holds too: A never compares its query with B's vectors.
    assert all(m["similarity"] is None for m in await _long_term(a, tenant, anima))
    assert (await _health(a))["reembed_pending"] is True

    # Health answers from a short-lived fact, not a query per probe; a fresh look sees new stale rows.
    await add_memory(a, tenant, anima, "User collects stamps.", time_end=when)
    assert (await _health(b))["reembed_pending"] is False, "within the TTL: the fact b learnt"
    assert await reembed_pending(b, max_age=0) is True


async def test_dreams_record_the_space_of_their_vectors(runtimes: tuple[Runtime, Runtime]) -> None:
    _, b = runtimes
    tenant = await make_tenant(b, "spaces")
    anima = await _anima(b, tenant)
    events = [
        EventCreate(anima_id=anima, event_type="message.in", content=f"I moved to Lisbon, note {i}.", session_id="s")
        for i in range(3)
    ]
    async with b.unit_of_work() as session:
        await record_events(session, tenant.org_id, events, b.clock())
    run = await run_dream(b.dreams, tenant.org_id, anima)
    assert run.status == "completed" and run.memories_created
    async with b.engine.connect() as conn:
        spaces = set(
            (
                await conn.execute(
                    text(
                        "SELECT DISTINCT embedding_space FROM memories WHERE anima_id = :a UNION "
                        "SELECT DISTINCT embedding_space FROM knowledge WHERE anima_id = :a"
                    ),
                    {"a": anima},
                )
            ).scalars()
        )
    assert spaces == {await current_space(b)}


async def test_the_space_filter_keeps_the_hnsw_index_usable(runtimes: tuple[Runtime, Runtime]) -> None:
    """The vector arm's space condition is a filter on the HNSW scan, not a reason to leave it."""
    _, b = runtimes
    (vec,) = await b.embedder.embed([QUERY])
    literal = "[" + ",".join(map(repr, vec)) + "]"
    async with b.engine.connect() as conn:
        # The table is tiny, so the planner would sort it; with sorts priced out, a plan without the
        # HNSW index exists only if the space filter made the index unusable (10k-row plans: `python -m benchmarks spaces`).
        await conn.execute(text("SET enable_seqscan = off"))
        await conn.execute(text("SET enable_sort = off"))
        dim = b.embedder.dim  # the width's partial HNSW index
        plan = "\n".join(
            (
                await conn.execute(
                    text(
                        f"EXPLAIN SELECT id FROM memories WHERE anima_id = :a AND {width_is('embedding', dim)} "
                        # A large anima's form (the index holds its rows only).
                        f"AND embedding_space = :s AND vector_indexed ORDER BY {hnsw_distance('embedding', ':v', dim)} LIMIT 10"
                    ),
                    {"a": uuid.uuid4(), "s": await current_space(b), "v": literal},
                )
            ).scalars()
        )
    assert f"ix_memories_embedding_hnsw{dim}" in plan, plan


def _reembed_cli(db: str, data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(db, data_dir, "reembed", *args, ELEPHANTASM_EMBEDDER="wordllama")


async def test_reembed_command(runtimes: tuple[Runtime, Runtime], space_db: str, data_dir: Path) -> None:
    a, b = runtimes
    tenant = await make_tenant(a, "spaces")
    anima = await _anima(a, tenant)
    for summary in DISTRACTORS[:3]:
        await add_memory(a, tenant, anima, summary, time_end=a.clock())
    bad = await asyncio.to_thread(_reembed_cli, space_db, data_dir, "--anima", "not-a-uuid")
    assert bad.returncode == 2 and "argument --anima: invalid UUID value: 'not-a-uuid'" in bad.stderr
    done = await asyncio.to_thread(_reembed_cli, space_db, data_dir, "--anima", str(anima), "--batch-size", "2")
    assert done.returncode == 0, done.stderr
    assert f"re-embedded 3 vector(s) into {b.embedder.space.label()}; 0 still stale" in done.stdout
    assert await _stale(b, anima) == {"memories": 0, "knowledge": 0}
