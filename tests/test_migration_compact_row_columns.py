"""Migration 0026: events.event_type becomes an enum and an empty meta is stored as NULL; and back."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import asyncpg
import pytest

from elephantasm.db.migrate import downgrade, upgrade
from elephantasm.domain.enums import EventType, values
from tests.support.databases import connect, database_before

ORG, ANIMA, MEMORY = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
# (type, role, meta as stored before 0026, content)
EVENTS = [
    ("message.in", "user", "{}", "I live in Lisbon."),
    ("message.out", None, '{"channel": "chat"}', "Noted."),
    ("tool.call", None, "{}", "lookup(weather)"),
]
RENDERED = "User: I live in Lisbon.\nAssistant: Noted.\nTool call: lookup(weather)"


@pytest.fixture
def old_db(pg_url: str) -> Iterator[tuple[str, str]]:
    """A database at the revision before 0026, and that revision."""
    with database_before(pg_url, "0026", "compactev") as db:
        yield db


async def _seed(url: str) -> list[uuid.UUID]:
    ids = [uuid.uuid4() for _ in EVENTS]
    conn = await connect(url)
    try:
        await conn.execute("INSERT INTO orgs (id, name) VALUES ($1, 'o')", ORG)
        key = await conn.fetchval(
            "INSERT INTO animas (id, org_id, name, event_seq) VALUES ($1, $2, 'a', 3) RETURNING key", ANIMA, ORG
        )
        for seq, (id_, (kind, role, meta, content)) in enumerate(zip(ids, EVENTS, strict=True), start=1):
            await conn.execute(
                "INSERT INTO events (id, anima_key, event_type, role, meta, content, occurred_at, seq) "
                "VALUES ($1, $2, $3, $4, $5::jsonb, $6, now() + make_interval(secs => $7), $7)",
                id_, key, kind, role, meta, content, seq,
            )  # fmt: skip
        stored = await conn.fetchrow(
            "INSERT INTO memories (id, org_id, anima_id, summary, content, event_ids) "
            "VALUES ($1, $2, $3, 's', $4, $5) RETURNING content, content_rendered",
            MEMORY, ORG, ANIMA, RENDERED, sorted(ids),
        )  # fmt: skip
        assert tuple(stored) == (None, True)
    finally:
        await conn.close()
    return ids


async def _column(conn: asyncpg.Connection, name: str) -> tuple[str, str, str | None]:
    row = await conn.fetchrow(
        "SELECT udt_name, is_nullable, column_default FROM information_schema.columns "
        "WHERE table_name = 'events' AND column_name = $1",
        name,
    )
    return tuple(row)  # type: ignore[return-value]


async def _stored(conn: asyncpg.Connection, ids: list[uuid.UUID]) -> list[tuple[str, str | None]]:
    rows = await conn.fetch("SELECT event_type::text, meta::text FROM events WHERE id = ANY($1) ORDER BY seq", ids)
    return [tuple(r) for r in rows]  # type: ignore[misc]


async def test_upgrade_compacts_type_and_empty_meta_and_downgrade_restores_them(old_db: tuple[str, str]) -> None:
    url, before = old_db
    ids = await _seed(url)

    await asyncio.to_thread(upgrade, url, "0026")
    conn = await connect(url)
    try:
        assert await _column(conn, "event_type") == ("event_type", "NO", None)
        assert await _column(conn, "meta") == ("jsonb", "YES", None)
        labels = await conn.fetchval("SELECT enum_range(NULL::event_type)::text[]")
        assert tuple(labels) == values(EventType)  # the model's enum, in its order
        assert await _stored(conn, ids) == [("message.in", None), ("message.out", '{"channel": "chat"}'),
                                            ("tool.call", None)]  # fmt: skip
        # memory_text renders the same text from the enum (its CASE reads the label).
        assert await conn.fetchval("SELECT memory_text(anima_id, event_ids) FROM memories") == RENDERED
        with pytest.raises(asyncpg.InvalidTextRepresentationError):  # a type the enum lacks
            await conn.execute("UPDATE events SET event_type = 'message.sideways' WHERE id = $1", ids[0])
    finally:
        await conn.close()

    await asyncio.to_thread(downgrade, url, before)
    conn = await connect(url)
    try:
        assert await _column(conn, "event_type") == ("varchar", "NO", None)
        assert await _column(conn, "meta") == ("jsonb", "NO", "'{}'::jsonb")
        assert await _stored(conn, ids) == [(k, m) for k, _, m, _ in EVENTS]
        assert await conn.fetchval("SELECT memory_text(anima_id, event_ids) FROM memories") == RENDERED
        assert await conn.fetchval("SELECT count(*) FROM pg_type WHERE typname = 'event_type'") == 0
    finally:
        await conn.close()


async def test_offline_memory_meta_becomes_null_and_comes_back(old_db: tuple[str, str]) -> None:
    url, before = old_db
    metas = ['{"engine": "offline"}', "{}", '{"model": "m", "engine": "llm"}',
             '{"engine": "offline", "state_since": "t"}']  # fmt: skip
    await _seed(url)  # one memory with the column default '{}'
    conn = await connect(url)
    try:
        for meta in metas:
            await conn.execute(
                "INSERT INTO memories (id, org_id, anima_id, summary, meta) VALUES ($1, $2, $3, $4::text, $4::text::jsonb)",
                uuid.uuid4(), ORG, ANIMA, meta,
            )  # fmt: skip
    finally:
        await conn.close()
    query = "SELECT summary, meta::text FROM memories WHERE id <> $1 ORDER BY summary"
    expected = sorted(zip(metas, metas, strict=True))

    await asyncio.to_thread(upgrade, url, "0026")
    conn = await connect(url)
    try:
        stored = [tuple(r) for r in await conn.fetch(query, MEMORY)]
        assert stored == [(m, None if m == metas[0] else m) for m, _ in expected]
    finally:
        await conn.close()

    await asyncio.to_thread(downgrade, url, before)
    conn = await connect(url)
    try:
        assert [tuple(r) for r in await conn.fetch(query, MEMORY)] == expected
        assert (
            await conn.fetchval(
                "SELECT is_nullable FROM information_schema.columns WHERE table_name = 'memories' AND column_name = 'meta'"
            )
            == "NO"
        )
    finally:
        await conn.close()


async def test_space_labels_become_codes_of_a_lookup_table_and_come_back(old_db: tuple[str, str]) -> None:
    url, before = old_db
    await _seed(url)
    labels = ["wordllama:l2_supercat/256/0.4.0.post1", "hash-v1/384/1", None]
    conn = await connect(url)
    try:
        for i, label in enumerate(labels):
            await conn.execute(
                "INSERT INTO memories (id, org_id, anima_id, summary, embedding, embedding_space) "
                "VALUES ($1, $2, $3, $4, '[1,0]'::halfvec, $5)",
                uuid.uuid4(), ORG, ANIMA, f"m{i}", label,
            )  # fmt: skip
        await conn.execute(
            "INSERT INTO knowledge (id, org_id, anima_id, type, content, content_hash, embedding, embedding_space) "
            "VALUES ($1, $2, $3, 'FACT', 'k', 'h', '[1,0]'::halfvec, $4)",
            uuid.uuid4(), ORG, ANIMA, labels[1],
        )  # fmt: skip
    finally:
        await conn.close()
    memories = "SELECT summary, embedding_space FROM memories WHERE summary LIKE 'm_' ORDER BY summary"

    await asyncio.to_thread(upgrade, url, "0026")
    conn = await connect(url)
    try:
        codes = {r["label"]: r["id"] for r in await conn.fetch("SELECT id, label FROM embedding_spaces")}
        assert sorted(codes) == sorted(labels[:2])  # each label once, whichever table it was in
        assert [tuple(r) for r in await conn.fetch(memories)] == [
            ("m0", codes[labels[0]]), ("m1", codes[labels[1]]), ("m2", None)
        ]  # fmt: skip
        assert await conn.fetchval("SELECT embedding_space FROM knowledge") == codes[labels[1]]
        for table in ("memories", "knowledge"):  # the partial index over the column is still there
            assert await conn.fetchval("SELECT count(*) FROM pg_indexes WHERE indexname = $1",
                                       f"ix_{table}_embedding_space") == 1  # fmt: skip
        with pytest.raises(asyncpg.UniqueViolationError):  # one code per label
            await conn.execute("INSERT INTO embedding_spaces (label) VALUES ($1)", labels[0])
    finally:
        await conn.close()

    await asyncio.to_thread(downgrade, url, before)
    conn = await connect(url)
    try:
        assert [tuple(r) for r in await conn.fetch(memories)] == [(f"m{i}", s) for i, s in enumerate(labels)]
        assert await conn.fetchval("SELECT embedding_space FROM knowledge") == labels[1]
        assert await conn.fetchval("SELECT to_regclass('embedding_spaces')") is None
    finally:
        await conn.close()
