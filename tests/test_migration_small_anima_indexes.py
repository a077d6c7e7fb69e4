"""Migration 0023: the pack and full-text indexes of memories and knowledge hold large animas'
rows only (``AND vector_indexed``); the downgrade rebuilds them over every row. Rows are untouched,
and the index contents follow the flag."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import pytest

from elephantasm.db.migrate import downgrade, upgrade
from tests.support.databases import connect, database_before, fetch_value

ORG, SMALL, LARGE = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
NAMES = (
    "ix_knowledge_anima_hash",
    "ix_knowledge_fts",
    "ix_knowledge_pack_happened",
    "ix_knowledge_pack_importance",
    "ix_memories_fts",
    "ix_memories_pack_happened",
    "ix_memories_pack_importance",
    "ix_memories_pack_score",
)
DEFS = "SELECT array_agg(indexdef ORDER BY indexname) FROM pg_indexes WHERE indexname = ANY($1)"
_MEMORIES = """INSERT INTO memories (id, org_id, anima_id, summary, importance, time_end)
SELECT gen_random_uuid(), $1, $2, 'memory about gardens ' || g, 0.5, now() FROM generate_series(1, $3) g"""
_KNOWLEDGE = """INSERT INTO knowledge (id, org_id, anima_id, type, content, content_hash)
SELECT gen_random_uuid(), $1, $2, 'FACT', 'likes gardens ' || g, md5(g::text) FROM generate_series(1, $3) g"""


@pytest.fixture
def old_db(pg_url: str) -> Iterator[tuple[str, str]]:
    """A database at the revision before 0023, and that revision."""
    with database_before(pg_url, "0023", "smallidx") as db:
        yield db


async def _defs(url: str) -> list[str]:
    conn = await connect(url)
    try:
        return list(await conn.fetchval(DEFS, list(NAMES)))
    finally:
        await conn.close()


async def _entries(url: str) -> dict[str, int]:
    """Entries of each pack index, read index-only (its predicate in the WHERE, seq scans off)."""
    conn = await connect(url)
    try:
        await conn.execute("SET enable_seqscan = off")
        live = "deleted_at IS NULL AND merged_into IS NULL AND state <> 'archived' AND vector_indexed"
        return {
            "memories": await conn.fetchval(f"SELECT count(*) FROM memories WHERE {live} AND importance >= 0"),
            "fts": await conn.fetchval("SELECT count(*) FROM memories WHERE vector_indexed AND fts @@ 'garden'"),
        }
    finally:
        await conn.close()


async def test_upgrade_narrows_pack_and_fts_indexes_to_large_animas_and_back(old_db: tuple[str, str]) -> None:
    url, before = old_db
    conn = await connect(url)
    try:
        await conn.execute("INSERT INTO orgs (id, name) VALUES ($1, 'o')", ORG)
        for anima, flipped in ((SMALL, False), (LARGE, True)):
            await conn.execute(
                "INSERT INTO animas (id, org_id, name, vectors_indexed) VALUES ($1, $2, 'a', $3)", anima, ORG, flipped
            )
            await conn.execute(_MEMORIES, ORG, anima, 5)
            await conn.execute(_KNOWLEDGE, ORG, anima, 3)
    finally:
        await conn.close()
    assert not any("vector_indexed" in d for d in await _defs(url))
    await asyncio.to_thread(upgrade, url, "0023")
    defs = await _defs(url)
    assert len(defs) == len(NAMES)
    assert all(d.endswith("AND vector_indexed)") or d.endswith("WHERE vector_indexed") for d in defs), defs
    assert all("fastupdate=off" in d for d in defs if "gin" in d), defs
    assert await _entries(url) == {"memories": 5, "fts": 5}  # the large anima's rows, the trigger's flag
    assert await fetch_value(url, "SELECT count(*) FROM memories") == 10
    await asyncio.to_thread(downgrade, url, before)
    defs = await _defs(url)
    assert len(defs) == len(NAMES) and not any("vector_indexed" in d for d in defs), defs
    assert all("fastupdate=off" in d for d in defs if "gin" in d), defs
    assert await fetch_value(url, "SELECT count(*) FROM knowledge") == 6
