"""Migration 0024: the dream journal stores batches of entries. Upgrade groups the one-row-per-entry
journal into rows (consecutive entries of one step, action and target type) that read back as the
same entries, in the same order, with the same ids; downgrade restores one row per entry."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest

from elephantasm.db.migrate import downgrade, upgrade
from elephantasm.ids import new_batch
from elephantasm.services.dreams.journal_rows import entry_id, expand
from tests.support.databases import connect, database_before

ORG, ANIMA, RUN = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
T1 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
T2 = T1 + timedelta(seconds=7)
_OLD = (
    "INSERT INTO dream_actions (id, org_id, anima_id, run_id, action, target_type, target_id, before, after, "
    "created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9::jsonb, $10)"
)
_READ_OLD = (
    "SELECT id, action, target_type, target_id, before::text AS before, after::text AS after, created_at "
    "FROM dream_actions ORDER BY created_at, action, id"
)
_READ_NEW = "SELECT * FROM dream_actions ORDER BY created_at, action, id"


@pytest.fixture
def old_db(pg_url: str) -> Iterator[tuple[str, str]]:
    with database_before(pg_url, "0024", "journal") as db:
        yield db


def _entries() -> list[tuple]:
    """(action, target_type, target_id, before, after, created_at) in the order a writer made them."""
    m = [uuid.uuid4() for _ in range(4)]
    k = [uuid.uuid4() for _ in range(3)]
    return [
        *[
            ("created", "memory", x, "null", json.dumps({"events": i, "importance": 0.5}), T1)
            for i, x in enumerate(m[:3])
        ],
        ("created", "knowledge", k[0], "null", json.dumps({"content": "User likes teal."}), T1),
        ("superseded", "knowledge", k[1], json.dumps({"value": "red"}), json.dumps({"value": "teal"}), T1),
        ("created", "knowledge", k[2], None, None, T1),  # SQL NULLs: read as None like JSON null
        # a later step where one action's target types interleave: three batches, in this order
        ("created", "memory", m[3], "null", json.dumps({"events": 1}), T2),
        ("created", "knowledge", k[0], "null", json.dumps({"content": "again"}), T2),
        ("created", "memory", m[0], "null", json.dumps({"events": 2}), T2),
        ("archived", "memory", m[1], json.dumps({"state": "active"}), json.dumps({"state": "archived"}), T2),
        ("updated", "identity", None, "null", json.dumps({"version": 2}), T2),
    ]


def _plain(value: Any) -> Any:
    value = json.loads(value) if isinstance(value, str) else value
    return None if value is None else value


async def _old_entries(url: str) -> list[tuple]:
    conn = await connect(url)
    try:
        rows = await conn.fetch(_READ_OLD)
    finally:
        await conn.close()
    return [(r["id"], r["action"], r["target_type"], r["target_id"], _plain(r["before"]), _plain(r["after"]),
             r["created_at"]) for r in rows]  # fmt: skip


async def _new_entries(url: str) -> tuple[list[tuple], int]:
    conn = await connect(url)
    try:
        rows = await conn.fetch(_READ_NEW)
    finally:
        await conn.close()
    out = []
    for r in rows:
        row = SimpleNamespace(**{k: (json.loads(v) if k in ("befores", "afters") and v else v) for k, v in r.items()})
        out += [(e.id, e.action, e.target_type, e.target_id, e.before, e.after, e.created_at) for e in expand(row)]
    return out, len(rows)


async def _load(url: str) -> None:
    """One org, anima and run with the per-entry journal of :func:`_entries` (ids in written order)."""
    conn = await connect(url)
    try:
        await conn.execute("INSERT INTO orgs (id, name) VALUES ($1, 'o')", ORG)
        await conn.execute("INSERT INTO animas (id, org_id, name) VALUES ($1, $2, 'a')", ANIMA, ORG)
        await conn.execute("INSERT INTO dream_runs (id, org_id, anima_id, status, trigger, engine) "
                           "VALUES ($1, $2, $3, 'completed', 't', 'o')", RUN, ORG, ANIMA)  # fmt: skip
        entries = _entries()
        for made, (action, kind, target, b, a, at) in zip(new_batch(len(entries)), entries, strict=True):
            await conn.execute(_OLD, uuid.UUID(str(made)), ORG, ANIMA, RUN, action, kind, target, b, a, at)
    finally:
        await conn.close()


async def test_upgrade_batches_entries_that_read_back_the_same_and_downgrade_restores_rows(
    old_db: tuple[str, str],
) -> None:
    url, before = old_db
    await _load(url)
    old = await _old_entries(url)
    assert len(old) == 11

    await asyncio.to_thread(upgrade, url, "0024")
    new, rows = await _new_entries(url)
    assert new == old
    # T1: created memory (3), created knowledge (2), superseded; T2: created memory, knowledge, memory; archived; updated
    assert rows == 8
    conn = await connect(url)
    try:
        target = await conn.fetchval("SELECT reloptions::text FROM pg_class WHERE relname = 'dream_actions'")
        storage = await conn.fetch("SELECT attname, attstorage::text AS attstorage FROM pg_attribute WHERE attrelid = 'dream_actions'::regclass "
                                   "AND attname IN ('target_ids', 'befores', 'afters', 'entry_ids')")  # fmt: skip
    finally:
        await conn.close()
    assert target == "{toast_tuple_target=128}" and {r["attstorage"] for r in storage} == {"m"}
    # A row the new writer makes: entry ids derived from the row id (no entry_ids); its last step.
    row_id, targets = uuid.UUID(str(new_batch(1)[0])), [uuid.uuid4(), None, uuid.uuid4()]
    conn = await connect(url)
    try:
        await conn.execute(
            "INSERT INTO dream_actions (id, org_id, anima_id, run_id, created_at, action, target_type, target_ids, "
            "befores, afters) VALUES ($1, $2, $3, $4, $5, 'decaying', 'memory', $6, NULL, $7::jsonb)",
            row_id,
            ORG,
            ANIMA,
            RUN,
            T2 + timedelta(seconds=1),
            targets,
            json.dumps([{"n": 0}, None, {"n": 2}]),
        )
    finally:
        await conn.close()
    written, _ = await _new_entries(url)
    assert written[:-3] == old
    assert [(e[0], e[3], e[4], e[5]) for e in written[-3:]] == [
        (entry_id(row_id, 0), targets[0], None, {"n": 0}),
        (entry_id(row_id, 1), None, None, None),
        (entry_id(row_id, 2), targets[2], None, {"n": 2}),
    ]

    await asyncio.to_thread(downgrade, url, before)
    assert await _old_entries(url) == written
