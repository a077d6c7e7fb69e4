"""Migration 0019: memories enter the HNSW index only for animas of ``INDEX_THRESHOLD`` live memories.
Upgrade flags the animas already that large and their memories and rebuilds the HNSW indexes with
``AND vector_indexed``; downgrade drops the flags and the trigger and rebuilds them over every row."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import pytest

from elephantasm.db.migrate import downgrade, upgrade
from elephantasm.db.vectors import INDEX_THRESHOLD
from tests.support.databases import connect, database_before, fetch_value

ORG, SMALL, LARGE = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
HNSW_DEF = "SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_memories_embedding_hnsw256'"
_LOAD = """INSERT INTO memories (id, org_id, anima_id, summary, embedding)
SELECT gen_random_uuid(), $1, $2, 'm' || g, CAST(array_fill(0.1::real, ARRAY[256]) AS vector)::halfvec
FROM generate_series(1, $3) g"""


@pytest.fixture
def old_db(pg_url: str) -> Iterator[tuple[str, str]]:
    with database_before(pg_url, "0019", "exactvec") as db:
        yield db


async def test_upgrade_flags_large_animas_and_narrows_hnsw_and_back(old_db: tuple[str, str]) -> None:
    url, before = old_db
    conn = await connect(url)
    try:
        await conn.execute("INSERT INTO orgs (id, name) VALUES ($1, 'o')", ORG)
        for anima, n in ((SMALL, 5), (LARGE, INDEX_THRESHOLD)):
            await conn.execute("INSERT INTO animas (id, org_id, name) VALUES ($1, $2, 'a')", anima, ORG)
            await conn.execute(_LOAD, ORG, anima, n)
    finally:
        await conn.close()
    assert "vector_indexed" not in str(await fetch_value(url, HNSW_DEF))
    await asyncio.to_thread(upgrade, url, "0019")
    assert str(await fetch_value(url, HNSW_DEF)).endswith("WHERE ((vector_dims(embedding) = 256) AND vector_indexed)")
    conn = await connect(url)
    try:
        rows = await conn.fetch(
            "SELECT a.id, a.vectors_indexed, bool_and(m.vector_indexed) AS all_, "
            "bool_or(m.vector_indexed) AS any_, count(*) FROM animas a "
            "JOIN memories m ON m.anima_id = a.id GROUP BY a.id, a.vectors_indexed"
        )
        got = {r["id"]: (r["vectors_indexed"], r["all_"], r["any_"], r["count"]) for r in rows}
        assert got == {SMALL: (False, False, False, 5), LARGE: (True, True, True, INDEX_THRESHOLD)}
        # The trigger marks later inserts by their anima's flag.
        await conn.execute(_LOAD, ORG, LARGE, 1)
        await conn.execute(_LOAD, ORG, SMALL, 1)
        assert await conn.fetchval("SELECT count(*) FROM memories WHERE vector_indexed") == INDEX_THRESHOLD + 1
    finally:
        await conn.close()
    await asyncio.to_thread(downgrade, url, before)
    assert str(await fetch_value(url, HNSW_DEF)).endswith("WHERE (vector_dims(embedding) = 256)")
    assert await fetch_value(url, "SELECT count(*) FROM memories") == 7 + INDEX_THRESHOLD
    cols = "SELECT count(*) FROM information_schema.columns WHERE column_name IN ('vector_indexed', 'vectors_indexed')"
    assert await fetch_value(url, cols) == 0
    assert await fetch_value(url, "SELECT count(*) FROM pg_trigger WHERE tgname = 'trg_memories_vector_indexed'") == 0
