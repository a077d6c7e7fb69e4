"""Knowledge and pending events read on a second connection that shares the compile's snapshot.

``services/packs/reads.py``: while the first connection reads the long-term memories, a spare
pooled connection imports the compile's exported snapshot and reads knowledge and the pending
events. The packs must be byte for byte the ones read on one connection, the second connection
must see exactly the first one's snapshot (not a later commit), and no second connection is taken
when the pool has none to spare.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from elephantasm.runtime import Runtime
from elephantasm.services.packs import compiler, reads
from elephantasm.services.packs.service import build_request
from tests.conftest import Tenant
from tests.packs.conftest import FROZEN_NOW
from tests.packs.helpers import add_knowledge, add_memory, extract

_REQUESTS = [
    {"query": "what does Dana drink in the morning?", "max_tokens": 4000},
    {"query": "Berlin offsite", "max_tokens": 250},
    {"max_tokens": 2000},
    {"query": "what did we decide about the budget", "preset": "recent"},
]


async def _fill(client: httpx.AsyncClient, rt: Runtime, tenant: Tenant, anima: str) -> None:
    """Memories, knowledge (linked to memories) and pending events in two sessions."""
    memories = []
    for i, line in enumerate(
        [
            "Dana drinks green tea every morning.",
            "The Berlin offsite is planned for March with Omar.",
            "We decided to cut the cloud budget by a tenth.",
            "Omar prefers short standups.",
            "The database migration finished without downtime.",
            "Dana switched from coffee to green tea.",
        ]
    ):
        when = FROZEN_NOW - timedelta(days=2 + i)
        memories.append(await add_memory(rt, tenant, anima, line, time_end=when, importance=0.3 + 0.1 * i))
    await add_knowledge(rt, tenant, anima, "Dana drinks green tea.", memory_ids=memories[:1])
    await add_knowledge(rt, tenant, anima, "The Berlin offsite is in March.", memory_ids=memories[1:2])
    await add_knowledge(rt, tenant, anima, "Dana used to drink coffee.", superseded=True)
    for i, line in enumerate(
        [
            "Budget review moved to Friday.",
            "Dana asked about the Berlin hotel.",
            "Green tea order placed for the office.",
        ]
    ):
        await extract(
            client,
            tenant,
            anima,
            line,
            session_id="s-old" if i < 2 else "s-now",
            occurred_at=(FROZEN_NOW - timedelta(hours=30 - 10 * i)).isoformat(),
        )


async def _packs(rt: Runtime, tenant: Tenant, anima: str) -> list[tuple[str, str]]:
    out = []
    for body in _REQUESTS:
        req = build_request(rt.packs, tenant.org_id, uuid.UUID(anima), as_of=FROZEN_NOW, **body)  # type: ignore[arg-type]
        pack = await compiler.compile_pack(rt.packs, req)
        wire = json.loads(pack.body)
        for volatile in ("compiled_at", "created_at"):
            wire.pop(volatile)
        out.append((pack.fingerprint, json.dumps(wire)))
    return out


def _count_second_connections(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The snapshot ids second connections are opened on, from now on."""
    opened: list[str] = []
    second = reads.snapshot_reader

    @asynccontextmanager
    async def counted(engine: AsyncEngine, snapshot: str, ef: str) -> AsyncIterator[AsyncConnection]:
        async with second(engine, snapshot, ef) as conn:
            opened.append(snapshot)
            yield conn

    monkeypatch.setattr(reads, "snapshot_reader", counted)
    return opened


async def test_packs_are_the_same_on_one_or_two_connections(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    rt, anima = pack_runtime, panima["id"]
    await _fill(pclient, rt, tenant, anima)
    used = _count_second_connections(monkeypatch)
    forked = await _packs(rt, tenant, anima)
    assert len(used) == len(_REQUESTS)  # every compile read on a second connection
    assert any("green tea" in body for _, body in forked)
    monkeypatch.setattr(reads, "spare_connection", lambda engine: False)
    assert await _packs(rt, tenant, anima) == forked
    assert len(used) == len(_REQUESTS)  # and none when the pool has none to spare


async def test_no_second_connection_while_another_compile_reads(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    rt, anima = pack_runtime, panima["id"]
    await _fill(pclient, rt, tenant, anima)
    forks = _count_second_connections(monkeypatch)
    monkeypatch.setattr(reads._Reading, "active", 1)  # another compile of the process is reading
    alone = await _packs(rt, tenant, anima)
    assert forks == []
    monkeypatch.setattr(reads._Reading, "active", 0)
    assert await _packs(rt, tenant, anima) == alone
    assert len(forks) == len(_REQUESTS)


async def test_second_connection_reads_the_exported_snapshot(runtime: Runtime) -> None:
    """A row committed after the export is invisible to the importing connection, as to the exporter."""
    name = f"snapshot-{uuid.uuid4()}"
    count = text("SELECT count(*) FROM orgs WHERE name = :name")
    async with reads.snapshot_transaction(runtime.engine) as first:
        snapshot = (await first.execute(text("SELECT pg_export_snapshot()"))).scalar_one()
        async with runtime.engine.begin() as writer:
            await writer.execute(
                text("INSERT INTO orgs (id, name) VALUES (:id, :name)"), {"id": uuid.uuid4(), "name": name}
            )
        async with reads.snapshot_reader(runtime.engine, snapshot, "100") as second:
            driver = (await second.get_raw_connection()).driver_connection
            assert driver is not None
            assert await driver.fetchval("SELECT count(*) FROM orgs WHERE name = $1", name) == 0
            assert await driver.fetchval("SELECT current_setting('hnsw.ef_search')") == "100"
            assert await driver.fetchval("SELECT current_setting('transaction_read_only')") == "on"
        # The second connection went back to the pool outside any transaction.
        assert not driver.is_in_transaction()
        assert (await first.execute(count, {"name": name})).scalar_one() == 0
    async with runtime.engine.connect() as fresh:
        assert (await fresh.execute(count, {"name": name})).scalar_one() == 1


async def test_no_second_connection_without_room_in_the_pool(runtime: Runtime) -> None:
    assert reads.spare_connection(None) is False

    class Full:
        def checkedout(self) -> int:
            return 10

        def size(self) -> int:
            return 10

    class Engine:
        pool = Full()

    assert reads.spare_connection(Engine()) is False  # type: ignore[arg-type]
    Engine.pool.checkedout = lambda: 3  # type: ignore[method-assign]
    assert reads.spare_connection(Engine()) is True  # type: ignore[arg-type]


async def test_a_bad_snapshot_id_is_refused(runtime: Runtime) -> None:
    with pytest.raises(ValueError):
        async with reads.snapshot_reader(runtime.engine, "x'; DROP TABLE orgs; --", "100"):
            pass
