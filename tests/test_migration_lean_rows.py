"""Migration 0020: knowledge enters the HNSW index only for flipped animas (``vectors_indexed``),
as memories do since 0019. Upgrade marks the knowledge of animas already flipped, adds the insert
trigger and rebuilds the knowledge HNSW indexes with ``AND vector_indexed``; downgrade rebuilds them
over every row and drops the column and the trigger."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import pytest

from elephantasm.db.migrate import downgrade, upgrade
from tests.support.databases import connect, database_before, fetch_value

ORG, SMALL, LARGE = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
HNSW_DEF = "SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_knowledge_embedding_hnsw256'"
_LOAD = """INSERT INTO knowledge (id, org_id, anima_id, type, content, content_hash, embedding)
SELECT gen_random_uuid(), $1, $2, 'FACT', 'k' || g, md5(g::text),
       CAST(array_fill(0.1::real, ARRAY[256]) AS vector)::halfvec
FROM generate_series(1, $3) g"""


@pytest.fixture
def old_db(pg_url: str) -> Iterator[tuple[str, str]]:
    with database_before(pg_url, "0020", "leanrows") as db:
        yield db


async def test_upgrade_marks_flipped_animas_knowledge_and_narrows_hnsw_and_back(old_db: tuple[str, str]) -> None:
    url, before = old_db
    conn = await connect(url)
    try:
        await conn.execute("INSERT INTO orgs (id, name) VALUES ($1, 'o')", ORG)
        for anima, flipped, n in ((SMALL, False, 3), (LARGE, True, 4)):
            await conn.execute("INSERT INTO animas (id, org_id, name, vectors_indexed) VALUES ($1, $2, 'a', $3)",
                               anima, ORG, flipped)  # fmt: skip
            await conn.execute(_LOAD, ORG, anima, n)
    finally:
        await conn.close()
    assert "vector_indexed" not in str(await fetch_value(url, HNSW_DEF))
    await asyncio.to_thread(upgrade, url, "0020")
    assert str(await fetch_value(url, HNSW_DEF)).endswith("WHERE ((vector_dims(embedding) = 256) AND vector_indexed)")
    conn = await connect(url)
    try:
        rows = await conn.fetch("SELECT anima_id, vector_indexed, count(*) FROM knowledge GROUP BY 1, 2")
        assert {(r["anima_id"], r["vector_indexed"]): r["count"] for r in rows} == {(SMALL, False): 3, (LARGE, True): 4}
        # The trigger marks later inserts by their anima's flag.
        await conn.execute(_LOAD, ORG, LARGE, 1)
        await conn.execute(_LOAD, ORG, SMALL, 1)
        assert await conn.fetchval("SELECT count(*) FROM knowledge WHERE vector_indexed") == 5
    finally:
        await conn.close()
    await asyncio.to_thread(downgrade, url, before)
    assert str(await fetch_value(url, HNSW_DEF)).endswith("WHERE (vector_dims(embedding) = 256)")
    assert await fetch_value(url, "SELECT count(*) FROM knowledge") == 9
    col = "SELECT count(*) FROM information_schema.columns WHERE table_name = 'knowledge' AND column_name = 'vector_indexed'"
    assert await fetch_value(url, col) == 0
    assert await fetch_value(url, "SELECT count(*) FROM pg_trigger WHERE tgname = 'trg_knowledge_vector_indexed'") == 0
    # 0019's memories trigger (whose function the knowledge trigger shared) is untouched.
    assert await fetch_value(url, "SELECT count(*) FROM pg_trigger WHERE tgname = 'trg_memories_vector_indexed'") == 1
