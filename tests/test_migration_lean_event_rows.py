"""Migration 0022: events lose org_id and anima_id (their anima_key implies both); and back."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import asyncpg
import pytest

from elephantasm.db.migrate import downgrade, upgrade
from tests.support.databases import connect, database_before

ORG = uuid.uuid4()
ANIMAS = [uuid.uuid4(), uuid.uuid4()]


@pytest.fixture
def old_db(pg_url: str) -> Iterator[tuple[str, str]]:
    """A database at the revision before 0022, and that revision."""
    with database_before(pg_url, "0022", "leanrows") as db:
        yield db


async def _columns(conn: asyncpg.Connection) -> set[str]:
    rows = await conn.fetch("SELECT column_name FROM information_schema.columns WHERE table_name = 'events'")
    return {r[0] for r in rows}


async def _foreign_keys(conn: asyncpg.Connection) -> list[str]:
    rows = await conn.fetch(
        "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'events'::regclass AND contype = 'f'"
    )
    return [r[0] for r in rows]


async def test_upgrade_drops_the_implied_columns_and_downgrade_restores_them(old_db: tuple[str, str]) -> None:
    url, before = old_db
    conn = await connect(url)
    try:
        await conn.execute("INSERT INTO orgs (id, name) VALUES ($1, 'o')", ORG)
        for anima in ANIMAS:
            key = await conn.fetchval(
                "INSERT INTO animas (id, org_id, name, event_seq) VALUES ($1, $2, 'a', 2) RETURNING key", anima, ORG
            )
            for seq in (1, 2):
                await conn.execute(
                    "INSERT INTO events (id, org_id, anima_id, anima_key, event_type, content, seq) "
                    "VALUES ($1, $2, $3, $4, 'message.in', 'x', $5)",
                    uuid.uuid4(), ORG, anima, key, seq,
                )  # fmt: skip
    finally:
        await conn.close()

    await asyncio.to_thread(upgrade, url, "0022")
    conn = await connect(url)
    try:
        columns = await _columns(conn)
        assert "anima_key" in columns and not {"org_id", "anima_id"} & columns
        assert await _foreign_keys(conn) == ["FOREIGN KEY (anima_key) REFERENCES animas(key) ON DELETE CASCADE"]
        assert await conn.fetchval("SELECT count(*) FROM pg_statistic_ext WHERE stxname = 'st_events_anima'") == 0
        assert await conn.fetchval("SELECT count(*) FROM events") == 4
        insert = "INSERT INTO events (id, anima_key, event_type, content, seq) VALUES ($1, $2, 'message.in', 'y', 9)"
        with pytest.raises(asyncpg.ForeignKeyViolationError):  # no such anima
            await conn.execute(insert, uuid.uuid4(), 10**12)
        # Deleting an anima still removes its events (through the key).
        await conn.execute("DELETE FROM animas WHERE id = $1", ANIMAS[1])
        assert await conn.fetchval("SELECT count(*) FROM events") == 2
    finally:
        await conn.close()

    await asyncio.to_thread(downgrade, url, before)
    conn = await connect(url)
    try:
        assert {"org_id", "anima_id", "anima_key"} <= await _columns(conn)
        stored = await conn.fetch("SELECT org_id, anima_id FROM events")
        assert [tuple(r) for r in stored] == [(ORG, ANIMAS[0])] * 2
        assert await _foreign_keys(conn) == [
            "FOREIGN KEY (anima_key, anima_id, org_id) REFERENCES animas(key, id, org_id) ON DELETE CASCADE"
        ]
        assert await conn.fetchval("SELECT count(*) FROM pg_statistic_ext WHERE stxname = 'st_events_anima'") == 1
    finally:
        await conn.close()


async def _rendered(conn: asyncpg.Connection, memory: uuid.UUID, anima: uuid.UUID, foreign: uuid.UUID) -> tuple:
    """What ``memory_text`` renders for the memory, and for its anima over another anima's event."""
    return (
        await conn.fetchval("SELECT memory_text(anima_id, event_ids) FROM memories WHERE id = $1", memory),
        await conn.fetchval("SELECT memory_text($1, ARRAY[$2::uuid])", anima, foreign),
    )


async def test_memory_text_renders_the_same_by_key_and_back(old_db: tuple[str, str]) -> None:
    """0022 re-creates ``memory_text`` reading events by their anima's key (the anima_id it read goes):
    a rendered memory reads the same text after the upgrade and after the downgrade, and another
    anima's event (here: another org's) is never rendered into it."""
    other_org, memory = uuid.uuid4(), uuid.uuid4()
    events = [uuid.uuid4(), uuid.uuid4()]
    foreign = uuid.uuid4()
    conn = await connect(url := old_db[0])
    try:
        await conn.execute("INSERT INTO orgs (id, name) VALUES ($1, 'o'), ($2, 'p')", ORG, other_org)
        for anima, org in ((ANIMAS[0], ORG), (ANIMAS[1], other_org)):
            await conn.execute("INSERT INTO animas (id, org_id, name, event_seq) VALUES ($1, $2, 'a', 2)", anima, org)
        add = (
            "INSERT INTO events (id, org_id, anima_id, anima_key, event_type, role, content, occurred_at, seq) "
            "SELECT $1, $2, $3, a.key, $4, $5, $6, now() + make_interval(secs => $7), $7 FROM animas a WHERE a.id = $3"
        )
        await conn.execute(add, events[0], ORG, ANIMAS[0], "message.in", "user", "I live in Lisbon.", 1)
        await conn.execute(add, events[1], ORG, ANIMAS[0], "message.out", None, "Noted.", 2)
        await conn.execute(add, foreign, other_org, ANIMAS[1], "message.in", "user", "Their secret.", 1)
        text = "User: I live in Lisbon.\nAssistant: Noted."
        stored = await conn.fetchrow(
            "INSERT INTO memories (id, org_id, anima_id, summary, content, event_ids) "
            "VALUES ($1, $2, $3, 's', $4, $5) RETURNING content, content_rendered",
            memory, ORG, ANIMAS[0], text, sorted(events),
        )  # fmt: skip
        assert tuple(stored) == (None, True)
        assert await _rendered(conn, memory, ANIMAS[0], foreign) == (text, None)
    finally:
        await conn.close()

    for step in (lambda: upgrade(url, "0022"), lambda: downgrade(url, old_db[1])):
        await asyncio.to_thread(step)
        conn = await connect(url)
        try:
            assert await _rendered(conn, memory, ANIMAS[0], foreign) == (text, None)
        finally:
            await conn.close()
