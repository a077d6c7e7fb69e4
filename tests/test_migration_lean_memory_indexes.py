"""Migration 0017 keys the memories' pack indexes on the anima alone and drops
``ix_memories_anima_time_end`` (no statement reads it); the downgrade puts both back as they were.
Rows are untouched either way."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import pytest

from elephantasm.db.migrate import downgrade, upgrade
from tests.support.databases import connect, database_before, fetch_value

ORG, ANIMA = uuid.uuid4(), uuid.uuid4()
EXISTS = "SELECT to_regclass('ix_memories_anima_time_end') IS NOT NULL"
# How each pack index's key begins, in name order.
KEYS = r"""SELECT array_agg(substring(indexdef FROM '\((?:org_id, )?anima_id, ') ORDER BY indexname) FROM pg_indexes
WHERE indexname IN ('ix_memories_pack_happened', 'ix_memories_pack_importance', 'ix_memories_pack_score')"""


@pytest.fixture
def old_db(pg_url: str) -> Iterator[tuple[str, str]]:
    """A database at the revision before 0017, and that revision."""
    with database_before(pg_url, "0017", "leanidx") as db:
        yield db


async def test_upgrade_keys_pack_indexes_on_the_anima_drops_time_end_and_back(old_db: tuple[str, str]) -> None:
    url, before = old_db
    conn = await connect(url)
    try:
        await conn.execute("INSERT INTO orgs (id, name) VALUES ($1, 'o')", ORG)
        await conn.execute("INSERT INTO animas (id, org_id, name) VALUES ($1, $2, 'a')", ANIMA, ORG)
        await conn.execute(
            "INSERT INTO memories (id, org_id, anima_id, summary, time_end) VALUES ($1, $2, $3, 's', now())",
            uuid.uuid4(),
            ORG,
            ANIMA,
        )
    finally:
        await conn.close()
    assert await fetch_value(url, EXISTS) is True
    assert await fetch_value(url, KEYS) == ["(org_id, anima_id, "] * 3
    await asyncio.to_thread(upgrade, url, "0017")
    assert await fetch_value(url, EXISTS) is False
    assert await fetch_value(url, KEYS) == ["(anima_id, "] * 3
    assert await fetch_value(url, "SELECT count(*) FROM memories") == 1
    await asyncio.to_thread(downgrade, url, before)
    assert await fetch_value(url, EXISTS) is True
    assert await fetch_value(url, KEYS) == ["(org_id, anima_id, "] * 3
    assert await fetch_value(url, "SELECT count(*) FROM memories") == 1
