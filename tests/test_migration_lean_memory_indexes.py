"""Migration 0017 rebuilds ``ix_memories_pack_importance`` without covering columns and
``ix_memories_pack_score`` covering ``created_at`` too; the downgrade puts both back as 0016 left them.
Rows are untouched either way."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import pytest

from elephantasm.db.migrate import downgrade, upgrade
from tests.support.databases import connect, database_before, query

ORG, ANIMA = uuid.uuid4(), uuid.uuid4()


@pytest.fixture
def old_db(pg_url: str) -> Iterator[tuple[str, str]]:
    """A database at the revision before 0017, and that revision."""
    with database_before(pg_url, "0017", "leanidx") as db:
        yield db


async def _indexdef(url: str, name: str) -> str | None:
    rows = await query(url, "SELECT indexdef FROM pg_indexes WHERE indexname = $1", name)
    return rows[0][0] if rows else None


async def test_upgrade_narrows_the_importance_index_and_back(old_db: tuple[str, str]) -> None:
    url, before = old_db
    conn = await connect(url)
    try:
        await conn.execute("INSERT INTO orgs (id, name) VALUES ($1, 'o')", ORG)
        await conn.execute("INSERT INTO animas (id, org_id, name) VALUES ($1, $2, 'a')", ANIMA, ORG)
        for importance in (0.1, 0.5, 0.9):
            await conn.execute(
                "INSERT INTO memories (id, org_id, anima_id, summary, importance) VALUES ($1, $2, $3, 's', $4)",
                uuid.uuid4(), ORG, ANIMA, importance)
    finally:
        await conn.close()
    assert await _indexdef(url, "ix_memories_pack_importance") is not None

    await asyncio.to_thread(upgrade, url, "0017")
    importance = await _indexdef(url, "ix_memories_pack_importance")
    assert importance is not None and "INCLUDE" not in importance and "btree (anima_id, importance) WHERE" in importance
    assert "WHERE ((deleted_at IS NULL) AND (merged_into IS NULL)" in importance
    score = await _indexdef(url, "ix_memories_pack_score")
    assert score is not None and "INCLUDE (importance, confidence, time_start, time_end, created_at, id)" in score
    assert "WHERE ((deleted_at IS NULL) AND (merged_into IS NULL)" in score
    assert len(await query(url, "SELECT 1 FROM memories")) == 3

    await asyncio.to_thread(downgrade, url, before)
    importance = await _indexdef(url, "ix_memories_pack_importance")
    assert importance is not None and "INCLUDE (confidence, time_start, time_end, created_at, id)" in importance
    score = await _indexdef(url, "ix_memories_pack_score")
    assert score is not None and "INCLUDE (importance, confidence, time_start, time_end, id)" in score
    assert len(await query(url, "SELECT 1 FROM memories")) == 3
