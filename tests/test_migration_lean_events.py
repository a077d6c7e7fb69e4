"""Migration 0012 drops the stored events.fts and makes the dedupe index partial, and back."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import asyncpg
import pytest

from elephantasm.db.migrate import downgrade, upgrade
from tests.support.databases import connect, database_before

ORG, ANIMA = uuid.uuid4(), uuid.uuid4()
_INSERT = (
    "INSERT INTO events (id, org_id, anima_id, event_type, content, dedupe_key, seq) "
    "VALUES ($1, $2, $3, 'message.in', $4, $5, $6)"
)


@pytest.fixture
def old_db(pg_url: str) -> Iterator[tuple[str, str]]:
    """A database at the revision before 0012, and that revision."""
    with database_before(pg_url, "0012", "lean") as db:
        yield db


async def _dedupe_index(conn: asyncpg.Connection) -> tuple[str | None, int]:
    indexdef = await conn.fetchval("SELECT indexdef FROM pg_indexes WHERE indexname = 'uq_events_anima_dedupe'")
    constraints = await conn.fetchval("SELECT count(*) FROM pg_constraint WHERE conname = 'uq_events_anima_dedupe'")
    return indexdef, constraints


async def test_upgrade_drops_the_tsvector_and_unkeyed_entries_and_downgrade_restores_them(
    old_db: tuple[str, str],
) -> None:
    url, before = old_db
    conn = await connect(url)
    try:
        await conn.execute("INSERT INTO orgs (id, name) VALUES ($1, 'o')", ORG)
        await conn.execute("INSERT INTO animas (id, org_id, name, event_seq) VALUES ($1, $2, 'a', 3)", ANIMA, ORG)
        for seq, (content, key) in enumerate([("the kettle boiled", "k1"), ("kettles again", None), ("x", None)], 1):
            await conn.execute(_INSERT, uuid.uuid4(), ORG, ANIMA, content, key, seq)
    finally:
        await conn.close()

    await asyncio.to_thread(upgrade, url, "0012")
    conn = await connect(url)
    try:
        fts = await conn.fetchval(
            "SELECT count(*) FROM pg_attribute WHERE attrelid = 'events'::regclass "
            "AND attname = 'fts' AND NOT attisdropped"
        )
        indexdef, constraints = await _dedupe_index(conn)
        assert (fts, constraints) == (0, 0)
        assert indexdef is not None and "UNIQUE" in indexdef and "WHERE (dedupe_key IS NOT NULL)" in indexdef
        with pytest.raises(asyncpg.UniqueViolationError):  # a key is still unique per anima
            await conn.execute(_INSERT, uuid.uuid4(), ORG, ANIMA, "again", "k1", 4)
        await conn.execute(_INSERT, uuid.uuid4(), ORG, ANIMA, "no key", None, 5)  # NULL keys never conflict
        assert await conn.fetchval("SELECT count(*) FROM events") == 4
    finally:
        await conn.close()

    await asyncio.to_thread(downgrade, url, before)
    conn = await connect(url)
    try:
        matched = await conn.fetch("SELECT content, fts @@ to_tsquery('english', 'kettle') AS m FROM events")
        kind = await conn.fetchval(
            "SELECT attgenerated FROM pg_attribute WHERE attrelid = 'events'::regclass AND attname = 'fts'"
        )
        _, constraints = await _dedupe_index(conn)
    finally:
        await conn.close()
    assert {r["content"]: r["m"] for r in matched} == {
        "the kettle boiled": True,
        "kettles again": True,
        "x": False,
        "no key": False,
    }
    assert kind == b"s" and constraints == 1  # stored again for every event; the constraint is back
