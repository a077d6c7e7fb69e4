"""Migration 0025: the events' time and session indexes hold only large animas' events; and back."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import asyncpg
import pytest

from elephantasm.db.migrate import downgrade, upgrade
from tests.support.databases import connect, database_before

ORG = uuid.uuid4()
LARGE, SMALL = uuid.uuid4(), uuid.uuid4()
INDEXES = ("ix_events_anima_occurred", "ix_events_anima_session")


@pytest.fixture
def old_db(pg_url: str) -> Iterator[tuple[str, str]]:
    """A database at the revision before 0025, and that revision."""
    with database_before(pg_url, "0025", "smallevidx") as db:
        yield db


async def _definitions(conn: asyncpg.Connection) -> dict[str, str]:
    rows = await conn.fetch("SELECT indexname, indexdef FROM pg_indexes WHERE indexname = ANY($1::text[])", INDEXES)
    return {r[0]: r[1].split(" USING btree ")[1] for r in rows}


async def test_upgrade_flips_large_animas_and_makes_the_indexes_partial_and_back(old_db: tuple[str, str]) -> None:
    url, before = old_db
    conn = await connect(url)
    try:
        await conn.execute("INSERT INTO orgs (id, name) VALUES ($1, 'o')", ORG)
        for anima, seq in ((LARGE, 1000), (SMALL, 999)):  # at the threshold, and one below it
            key = await conn.fetchval(
                "INSERT INTO animas (id, org_id, name, event_seq) VALUES ($1, $2, 'a', $3) RETURNING key",
                anima,
                ORG,
                seq,
            )
            await conn.execute(
                "INSERT INTO events (id, anima_key, event_type, content, session_id, seq) "
                "SELECT gen_random_uuid(), $1, 'message.in', 'x', 's', g FROM generate_series($2 - 2, $2) g",
                key, seq,
            )  # fmt: skip
    finally:
        await conn.close()

    await asyncio.to_thread(upgrade, url, "0025")
    conn = await connect(url)
    try:
        flipped = await conn.fetch("SELECT id, events_indexed FROM animas")
        assert dict((r[0], r[1]) for r in flipped) == {LARGE: True, SMALL: False}
        flags = await conn.fetch(
            "SELECT a.id, e.time_indexed, count(*) FROM events e JOIN animas a ON a.key = e.anima_key GROUP BY 1, 2"
        )
        assert sorted((r[0] == LARGE, r[1], r[2]) for r in flags) == [(False, None, 3), (True, True, 3)]
        assert await _definitions(conn) == {
            "ix_events_anima_occurred": "(anima_key, occurred_at) WHERE time_indexed",
            "ix_events_anima_session": "(anima_key, session_id, occurred_at) WHERE time_indexed",
        }
    finally:
        await conn.close()

    await asyncio.to_thread(downgrade, url, before)
    conn = await connect(url)
    try:
        assert await _definitions(conn) == {
            "ix_events_anima_occurred": "(anima_key, occurred_at)",
            "ix_events_anima_session": "(anima_key, session_id, occurred_at)",
        }
        columns = await conn.fetch(
            "SELECT column_name FROM information_schema.columns WHERE column_name IN ('events_indexed', 'time_indexed')"
        )
        assert columns == []
        assert await conn.fetchval("SELECT count(*) FROM events") == 6
    finally:
        await conn.close()
