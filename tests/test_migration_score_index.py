"""Migration 0016 adds ``ix_memories_pack_score`` on the models' score key, and the downgrade drops it."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import pytest

from elephantasm.db.migrate import downgrade, upgrade
from elephantasm.db.models import memory_score_key
from tests.support.databases import connect, database_before

ORG, ANIMA = uuid.uuid4(), uuid.uuid4()
# (importance, confidence) → the key as the score clamps them: importance + 0.4 × confidence
MEMORIES = {(0.5, 0.5): 0.7, (1.2, 0.25): 1.1, (-0.1, 1.5): 0.4}


@pytest.fixture
def old_db(pg_url: str) -> Iterator[tuple[str, str]]:
    """A database at the revision before 0016, and that revision."""
    with database_before(pg_url, "0016", "scorekey") as db:
        yield db


async def _query(url: str, sql: str, *args: object) -> list[tuple]:
    conn = await connect(url)
    try:
        return [tuple(r) for r in await conn.fetch(sql, *args)]
    finally:
        await conn.close()


async def test_upgrade_indexes_the_score_key_and_downgrade_drops_it(old_db: tuple[str, str]) -> None:
    url, before = old_db
    conn = await connect(url)
    try:
        await conn.execute("INSERT INTO orgs (id, name) VALUES ($1, 'o')", ORG)
        await conn.execute("INSERT INTO animas (id, org_id, name) VALUES ($1, $2, 'a')", ANIMA, ORG)
        for importance, confidence in MEMORIES:
            await conn.execute(
                "INSERT INTO memories (id, org_id, anima_id, summary, importance, confidence) "
                "VALUES ($1, $2, $3, 's', $4, $5)", uuid.uuid4(), ORG, ANIMA, importance, confidence)
    finally:
        await conn.close()
    await asyncio.to_thread(upgrade, url, "0016")
    (definition,) = await _query(url, "SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_memories_pack_score'")
    assert "INCLUDE (importance, confidence, time_start, time_end, id)" in definition[0]
    assert "WHERE ((deleted_at IS NULL) AND (merged_into IS NULL)" in definition[0]
    # The key (the statements' text, the index's expression) is the clamped sum.
    keys = await _query(url, f"SELECT {memory_score_key('m')} FROM memories m WHERE m.anima_id = $1 "
                             "ORDER BY 1", ANIMA)
    assert [round(k, 12) for (k,) in keys] == sorted(MEMORIES.values())

    await asyncio.to_thread(downgrade, url, before)
    assert await _query(url, "SELECT to_regclass('ix_memories_pack_score')") == [(None,)]
    assert len(await _query(url, "SELECT 1 FROM memories")) == len(MEMORIES)
