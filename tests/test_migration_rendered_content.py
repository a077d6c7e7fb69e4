"""Migration 0021: memories render their content from their events. Upgrade keeps existing rows as
they are (content stored, the same full-text vector) and renders the new rows whose content is their
events' lines; downgrade stores every rendered content again and makes ``fts`` generated again."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from elephantasm.db.migrate import downgrade, upgrade
from tests.support.databases import connect, database_before, fetch_value

ORG, ANIMA, EVENT = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
OLD, NEW, OWN = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
RENDERED = "User: the printer jammed again"
_MEMORY = "INSERT INTO memories (id, org_id, anima_id, summary, content, event_ids) VALUES ($1, $2, $3, 'jam', $4, $5)"
GENERATED = "SELECT is_generated FROM information_schema.columns WHERE table_name = 'memories' AND column_name = 'fts'"


@pytest.fixture
def old_db(pg_url: str) -> Iterator[tuple[str, str]]:
    with database_before(pg_url, "0021", "rendered") as db:
        yield db


async def _rows(url: str) -> dict[uuid.UUID, tuple]:
    conn = await connect(url)
    try:
        rows = await conn.fetch("SELECT id, content, fts::text AS fts FROM memories")
        return {r["id"]: (r["content"], r["fts"]) for r in rows}
    finally:
        await conn.close()


async def test_upgrade_keeps_stored_rows_renders_new_ones_and_back(old_db: tuple[str, str]) -> None:
    url, before = old_db
    conn = await connect(url)
    try:
        await conn.execute("INSERT INTO orgs (id, name) VALUES ($1, 'o')", ORG)
        await conn.execute("INSERT INTO animas (id, org_id, name) VALUES ($1, $2, 'a')", ANIMA, ORG)
        await conn.execute(
            "INSERT INTO events (id, org_id, anima_id, event_type, role, content, occurred_at, seq, anima_key) "
            "SELECT $1, $2, $3, 'message.in', 'user', 'the printer jammed again', $4, 1, key FROM animas WHERE id = $3",
            EVENT,
            ORG,
            ANIMA,
            datetime(2026, 1, 1, tzinfo=UTC),
        )
        await conn.execute(_MEMORY, OLD, ORG, ANIMA, RENDERED, [EVENT])
    finally:
        await conn.close()
    at_0019 = await _rows(url)
    assert await fetch_value(url, GENERATED) == "ALWAYS"

    await asyncio.to_thread(upgrade, url, "0021")
    assert await fetch_value(url, GENERATED) == "NEVER"
    assert await _rows(url) == at_0019  # no backfill: the old row keeps its content and its lexemes
    conn = await connect(url)
    try:
        await conn.execute(_MEMORY, NEW, ORG, ANIMA, RENDERED, [EVENT])
        await conn.execute(_MEMORY, OWN, ORG, ANIMA, "The user's printer jams.", [EVENT])
        flags = dict(await conn.fetch("SELECT id, content_rendered FROM memories"))
    finally:
        await conn.close()
    assert flags == {OLD: False, NEW: True, OWN: False}
    rows = await _rows(url)
    assert rows[NEW] == (None, at_0019[OLD][1])  # not stored, same full-text vector
    assert rows[OWN][0] == "The user's printer jams."

    await asyncio.to_thread(downgrade, url, before)
    assert await fetch_value(url, GENERATED) == "ALWAYS"
    rows = await _rows(url)
    assert rows[NEW] == at_0019[OLD] and rows[OLD] == at_0019[OLD]  # the rendered content is stored again
    assert await fetch_value(url, "SELECT count(*) FROM pg_trigger WHERE tgname = 'trg_memories_text'") == 0
    assert await fetch_value(url, "SELECT count(*) FROM pg_proc WHERE proname IN ('memory_text', 'memories_text')") == 0
    index = "SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_memories_fts'"
    assert "gin (fts)" in str(await fetch_value(url, index))
