"""Migration 0014 moves recall state from the memories row into memory_recalls, and back."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from alembic.script import ScriptDirectory

from elephantasm.db.migrate import alembic_config, downgrade, upgrade
from tests.support.databases import connect, create_database, drop_database

T = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
ORG, ANIMA = uuid.uuid4(), uuid.uuid4()
# name → (recall_count, last_recalled_at) as stored before 0014
MEMORIES = {"recalled": (3, T), "counted, no time": (2, None), "timed, no count": (0, T), "never": (0, None)}


@pytest.fixture
def old_db(pg_url: str) -> Iterator[tuple[str, str]]:
    """A database at the revision before 0014, and that revision."""
    url = create_database(pg_url, "recalls")
    before = ScriptDirectory.from_config(alembic_config(url)).get_revision("0014").down_revision
    assert isinstance(before, str)
    upgrade(url, before)
    yield url, before
    drop_database(url)


async def _seed(url: str) -> dict[str, uuid.UUID]:
    ids = {name: uuid.uuid4() for name in MEMORIES}
    conn = await connect(url)
    try:
        await conn.execute("INSERT INTO orgs (id, name) VALUES ($1, 'o')", ORG)
        await conn.execute("INSERT INTO animas (id, org_id, name) VALUES ($1, $2, 'a')", ANIMA, ORG)
        for name, (count, at) in MEMORIES.items():
            await conn.execute(
                "INSERT INTO memories (id, org_id, anima_id, summary, recall_count, last_recalled_at) "
                "VALUES ($1, $2, $3, $4, $5, $6)",
                ids[name],
                ORG,
                ANIMA,
                name,
                count,
                at,
            )
    finally:
        await conn.close()
    return ids


async def _fetch(url: str, sql: str) -> list[tuple]:
    conn = await connect(url)
    try:
        return [tuple(r) for r in await conn.fetch(sql)]
    finally:
        await conn.close()


async def test_upgrade_moves_recall_state_and_downgrade_moves_it_back(old_db: tuple[str, str]) -> None:
    url, before = old_db
    ids = await _seed(url)
    names = {v: k for k, v in ids.items()}
    await asyncio.to_thread(upgrade, url, "0014")
    moved = await _fetch(url, "SELECT memory_id, org_id, anima_id, recall_count, last_recalled_at FROM memory_recalls")
    assert {names[m]: rest for m, *rest in moved} == {
        name: [ORG, ANIMA, count, at] for name, (count, at) in MEMORIES.items() if name != "never"
    }
    columns = {
        r[0]
        for r in await _fetch(url, "SELECT column_name FROM information_schema.columns WHERE table_name = 'memories'")
    }
    assert not columns & {"recall_count", "last_recalled_at"}
    pack_indexes = await _fetch(url, "SELECT indexdef FROM pg_indexes WHERE indexname LIKE 'ix_memories_pack_%'")
    assert len(pack_indexes) == 2 and not any("recall" in d for (d,) in pack_indexes)
    options = await _fetch(url, "SELECT reloptions FROM pg_class WHERE relname = 'memory_recalls'")
    assert options == [(["fillfactor=70"],)]

    await asyncio.to_thread(downgrade, url, before)
    back = await _fetch(url, "SELECT id, recall_count, last_recalled_at FROM memories")
    assert {names[m]: (count, at) for m, count, at in back} == MEMORIES
    assert await _fetch(url, "SELECT to_regclass('memory_recalls')") == [(None,)]
    pack_indexes = await _fetch(url, "SELECT indexdef FROM pg_indexes WHERE indexname LIKE 'ix_memories_pack_%'")
    assert len(pack_indexes) == 2 and all("recall_count" in d and "last_recalled_at" in d for (d,) in pack_indexes)
