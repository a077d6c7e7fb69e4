"""Migration 0013: provenance links become each memory's ascending ``event_ids`` (and links again on
downgrade), the memories' full-text vectors lose their positions (and get them back), and memory
rows are kept out of TOAST (and not, after downgrade)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from elephantasm.db.migrate import downgrade, upgrade
from tests.support.databases import connect, create_database, drop_database


@pytest.fixture
def db(pg_url: str) -> Iterator[str]:
    url = create_database(pg_url, "mig13")
    yield url
    drop_database(url)


async def _seed(url: str) -> tuple[dict[str, uuid.UUID], list[uuid.UUID]]:
    """At 0011: three events; memory 'two' linked to events 2 and 0, memory 'none' without links."""
    conn = await connect(url)
    org, anima = uuid.uuid4(), uuid.uuid4()
    events = [uuid.uuid4() for _ in range(3)]
    memories = {"two": uuid.uuid4(), "none": uuid.uuid4()}
    try:
        await conn.execute("INSERT INTO orgs (id, name) VALUES ($1, 'o')", org)
        await conn.execute("INSERT INTO animas (id, org_id, name) VALUES ($1, $2, 'a')", anima, org)
        for seq, event in enumerate(events, start=1):
            await conn.execute(
                "INSERT INTO events (id, org_id, anima_id, event_type, content, occurred_at, seq) "
                "VALUES ($1, $2, $3, 'message.in', 'hello', $4, $5)",
                event,
                org,
                anima,
                datetime(2026, 1, 1, tzinfo=UTC),
                seq,
            )
        for memory in memories.values():
            await conn.execute(
                "INSERT INTO memories (id, org_id, anima_id, summary, content) "
                "VALUES ($1, $2, $3, 'the printer jammed again', 'User: the printer jammed again, the printer!')",
                memory,
                org,
                anima,
            )
        for event in (events[2], events[0]):
            await conn.execute(
                "INSERT INTO memory_events (memory_id, event_id, org_id, anima_id) VALUES ($1, $2, $3, $4)",
                memories["two"],
                event,
                org,
                anima,
            )
    finally:
        await conn.close()
    return memories, events


async def _fetch(url: str, sql: str) -> list:
    conn = await connect(url)
    try:
        return list(await conn.fetch(sql))
    finally:
        await conn.close()


async def _options(url: str) -> list[str] | None:
    (row,) = await _fetch(url, "SELECT reloptions FROM pg_class WHERE relname = 'memories'")
    return row["reloptions"]


async def test_links_and_text_vectors_convert_both_ways(db: str) -> None:
    await asyncio.to_thread(upgrade, db, "0011")
    memories, events = await _seed(db)

    await asyncio.to_thread(upgrade, db, "0013")
    rows = {r["id"]: r for r in await _fetch(db, "SELECT id, event_ids, fts::text AS fts FROM memories")}
    assert rows[memories["two"]]["event_ids"] == sorted([events[0], events[2]])
    assert rows[memories["none"]]["event_ids"] == []
    assert await _fetch(db, "SELECT 1 FROM pg_tables WHERE tablename = 'memory_events'") == []
    assert rows[memories["two"]]["fts"] == "'jam' 'printer' 'user'"  # lexemes, no positions
    assert await _options(db) == ["toast_tuple_target=8160"]  # rows stay out of TOAST

    await asyncio.to_thread(downgrade, db, "0011")
    links = await _fetch(db, "SELECT memory_id, event_id FROM memory_events ORDER BY event_id")
    assert sorted((r["memory_id"], r["event_id"]) for r in links) == sorted(
        (memories["two"], e) for e in (events[0], events[2])
    )
    (back,) = await _fetch(db, f"SELECT fts::text AS fts FROM memories WHERE id = '{memories['two']}'")
    assert back["fts"] == "'jam':3,8 'printer':2,7,11 'user':5"  # positions are back
    assert await _options(db) is None
