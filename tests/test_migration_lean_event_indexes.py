"""Migration 0015: a narrower time index and a virtual events.updated_at, and back."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from elephantasm.db.migrate import downgrade, upgrade
from tests.support.databases import connect, database_before

ORG, ANIMA = uuid.uuid4(), uuid.uuid4()
T = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
# (session_id, created_at, updated_at as stored before 0015; events never changed, so they are equal)
EVENTS = [
    ("s1", T, T),
    ("s1", T + timedelta(minutes=1), T + timedelta(minutes=1)),
    (None, T + timedelta(hours=1), T + timedelta(hours=1)),
]


@pytest.fixture
def old_db(pg_url: str) -> Iterator[tuple[str, str]]:
    """A database at the revision before 0015, and that revision."""
    with database_before(pg_url, "0015", "leanidx") as db:
        yield db


async def _state(conn: asyncpg.Connection) -> tuple[tuple[str, str], str, list[tuple]]:
    defs = dict(await conn.fetch("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'events'"))
    index = (defs["ix_events_anima_session"], defs["ix_events_org_anima_occurred"])
    generated = await conn.fetchval(
        "SELECT attgenerated::text FROM pg_attribute WHERE attrelid = 'events'::regclass "
        "AND attname = 'updated_at' AND NOT attisdropped"
    )
    rows = await conn.fetch("SELECT session_id, created_at, updated_at FROM events ORDER BY seq")
    return index, generated, [tuple(r) for r in rows]


async def test_upgrade_narrows_the_time_index_and_computes_updated_at(old_db: tuple[str, str]) -> None:
    url, before = old_db
    conn = await connect(url)
    try:
        await conn.execute("INSERT INTO orgs (id, name) VALUES ($1, 'o')", ORG)
        await conn.execute("INSERT INTO animas (id, org_id, name, event_seq) VALUES ($1, $2, 'a', 3)", ANIMA, ORG)
        for seq, (session, created, updated) in enumerate(EVENTS, 1):
            await conn.execute(
                "INSERT INTO events (id, org_id, anima_id, event_type, content, session_id, created_at, updated_at, "
                "seq) VALUES ($1, $2, $3, 'message.in', 'x', $4, $5, $6, $7)",
                uuid.uuid4(),
                ORG,
                ANIMA,
                session,
                created,
                updated,
                seq,
            )
    finally:
        await conn.close()

    await asyncio.to_thread(upgrade, url, "0015")
    conn = await connect(url)
    try:
        index, generated, rows = await _state(conn)
        assert index[0].endswith("USING btree (anima_id, session_id, occurred_at)")  # unchanged
        assert index[1].endswith("USING btree (org_id, anima_id, occurred_at)")
        assert generated == "v"  # virtual: nothing stored
        assert rows == EVENTS
        later = T + timedelta(days=1)
        await conn.execute(
            "INSERT INTO events (id, org_id, anima_id, event_type, content, created_at, seq) "
            "VALUES ($1, $2, $3, 'message.in', 'y', $4, 4)",
            uuid.uuid4(),
            ORG,
            ANIMA,
            later,
        )
        assert await conn.fetchval("SELECT updated_at FROM events WHERE seq = 4") == later
        with pytest.raises(asyncpg.GeneratedAlwaysError):  # never written
            await conn.execute("UPDATE events SET updated_at = now()")
    finally:
        await conn.close()

    await asyncio.to_thread(downgrade, url, before)
    conn = await connect(url)
    try:
        index, generated, rows = await _state(conn)
        assert index[0].endswith("USING btree (anima_id, session_id, occurred_at)")
        assert index[1].endswith("USING btree (org_id, anima_id, occurred_at, id)")
        assert generated == ""  # stored again
        assert rows == [*EVENTS, (None, later, later)]
    finally:
        await conn.close()
