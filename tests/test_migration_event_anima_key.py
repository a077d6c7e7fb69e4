"""Migration 0018: animas get a compact key, events carry it and their anima indexes lead with it; and back."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import asyncpg
import pytest

from elephantasm.db.migrate import downgrade, upgrade
from tests.support.databases import connect, database_before

ORG, OTHER_ORG = uuid.uuid4(), uuid.uuid4()
ANIMAS = [uuid.uuid4(), uuid.uuid4()]
INDEXES = ("uq_events_anima_seq", "ix_events_anima_session", "uq_events_anima_dedupe")


@pytest.fixture
def old_db(pg_url: str) -> Iterator[tuple[str, str]]:
    """A database at the revision before 0018, and that revision."""
    with database_before(pg_url, "0018", "animakey") as db:
        yield db


async def _defs(conn: asyncpg.Connection) -> dict[str, str]:
    rows = await conn.fetch("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'events'")
    return {name: d.split(" USING btree ", 1)[1] for name, d in rows if name != "events_pkey"}


async def _foreign_keys(conn: asyncpg.Connection) -> dict[str, str]:
    rows = await conn.fetch(
        "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'events'::regclass AND contype = 'f'"
    )
    return dict(rows)  # type: ignore[arg-type]


async def test_upgrade_keys_events_by_anima_key_and_downgrade_restores(old_db: tuple[str, str]) -> None:
    url, before = old_db
    conn = await connect(url)
    try:
        await conn.execute("INSERT INTO orgs (id, name) VALUES ($1, 'o'), ($2, 'p')", ORG, OTHER_ORG)
        for anima in ANIMAS:
            await conn.execute("INSERT INTO animas (id, org_id, name, event_seq) VALUES ($1, $2, 'a', 2)", anima, ORG)
            for seq in (1, 2):
                await conn.execute(
                    "INSERT INTO events (id, org_id, anima_id, event_type, content, session_id, dedupe_key, seq) "
                    "VALUES ($1, $2, $3, 'message.in', 'x', 's', $4, $5)",
                    uuid.uuid4(), ORG, anima, f"k{seq}", seq,
                )  # fmt: skip
    finally:
        await conn.close()

    await asyncio.to_thread(upgrade, url, "0018")
    conn = await connect(url)
    try:
        keys = dict(await conn.fetch("SELECT id, key FROM animas"))
        assert len(set(keys.values())) == 2 and all(k is not None for k in keys.values())
        stored = await conn.fetch("SELECT anima_id, anima_key FROM events")
        assert len(stored) == 4 and all(r["anima_key"] == keys[r["anima_id"]] for r in stored)
        defs = await _defs(conn)
        assert defs["uq_events_anima_seq"] == "(anima_key, seq)"
        assert defs["ix_events_anima_occurred"] == "(anima_key, occurred_at)"
        assert defs["ix_events_anima_session"] == "(anima_key, session_id, occurred_at)"
        assert defs["uq_events_anima_dedupe"] == "(anima_key, dedupe_key) WHERE (dedupe_key IS NOT NULL)"
        assert "ix_events_org_anima_occurred" not in defs
        assert list((await _foreign_keys(conn)).values()) == [
            "FOREIGN KEY (anima_key, anima_id, org_id) REFERENCES animas(key, id, org_id) ON DELETE CASCADE"
        ]
        # A new anima gets a new key; an event whose key, anima and org disagree is refused.
        new = uuid.uuid4()
        key = await conn.fetchval("INSERT INTO animas (id, org_id, name) VALUES ($1, $2, 'n') RETURNING key", new, ORG)
        assert key > max(keys.values())
        insert = (
            "INSERT INTO events (id, org_id, anima_id, anima_key, event_type, content, seq) "
            "VALUES ($1, $2, $3, $4, 'message.in', 'y', 9)"
        )
        with pytest.raises(asyncpg.ForeignKeyViolationError):
            await conn.execute(insert, uuid.uuid4(), ORG, new, keys[ANIMAS[0]])
        with pytest.raises(asyncpg.ForeignKeyViolationError):
            await conn.execute(insert, uuid.uuid4(), OTHER_ORG, new, key)
        await conn.execute(insert, uuid.uuid4(), ORG, new, key)
        with pytest.raises(asyncpg.GeneratedAlwaysError):  # server-assigned only
            await conn.execute("UPDATE animas SET key = 99 WHERE id = $1", new)
        # Deleting an anima removes its events (through the key).
        await conn.execute("DELETE FROM animas WHERE id = $1", ANIMAS[1])
        assert await conn.fetchval("SELECT count(*) FROM events") == 3
    finally:
        await conn.close()

    await asyncio.to_thread(downgrade, url, before)
    conn = await connect(url)
    try:
        defs = await _defs(conn)
        assert defs["uq_events_anima_seq"] == "(anima_id, seq)"
        assert defs["ix_events_org_anima_occurred"] == "(org_id, anima_id, occurred_at)"
        assert defs["ix_events_anima_session"] == "(anima_id, session_id, occurred_at)"
        assert defs["uq_events_anima_dedupe"] == "(anima_id, dedupe_key) WHERE (dedupe_key IS NOT NULL)"
        assert sorted(await _foreign_keys(conn)) == ["events_anima_id_fkey", "events_org_id_fkey"]
        columns = {
            r[0]
            for r in await conn.fetch(
                "SELECT column_name FROM information_schema.columns WHERE table_name IN ('events', 'animas')"
            )
        }
        assert not {"key", "anima_key"} & columns
        assert await conn.fetchval("SELECT count(*) FROM events") == 3
    finally:
        await conn.close()
