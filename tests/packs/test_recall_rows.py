"""Recall state lives in ``memory_recalls``: recorded without rewriting the memory row,
read back through the memories API, scoped to the memory's tenant, gone with the memory."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

import httpx
import pytest
from sqlalchemy import text

from elephantasm.domain.presets import PRESET_NAMES, compile_weights, get_preset
from elephantasm.runtime import Runtime
from elephantasm.services.packs import candidates as cands
from elephantasm.services.purge import purge_anima
from tests.conftest import Tenant
from tests.packs.conftest import FROZEN_NOW
from tests.packs.helpers import add_memory, latest


async def _serve_and_flush(client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, anima_id: str) -> dict:
    """Serve a pack (recording its memories' recalls) and write the recalls now; returns the pack."""
    pack = (await latest(client, tenant, anima_id)).json()
    await runtime.pack_state.recalls.flush()
    return pack


async def _row_version(runtime: Runtime, memory_id: uuid.UUID) -> tuple[str, str]:
    """(ctid, xmin) of the memory's row: both change whenever the row is rewritten."""
    async with runtime.engine.connect() as conn:
        row = (
            await conn.execute(text("SELECT ctid::text, xmin::text FROM memories WHERE id = :id"), {"id": memory_id})
        ).one()
    return row[0], row[1]


async def _recall_rows(runtime: Runtime, memory_id: uuid.UUID) -> list[tuple]:
    async with runtime.engine.connect() as conn:
        rows = await conn.execute(
            text("SELECT org_id, anima_id, recall_count, last_recalled_at FROM memory_recalls WHERE memory_id = :id"),
            {"id": memory_id},
        )
        return [tuple(r) for r in rows]


def _at(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


async def test_recalls_are_recorded_beside_the_memory_and_read_back_by_the_api(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    pack_runtime.pack_state.recalls.interval = 3600  # only the explicit flushes write
    memory = await add_memory(
        pack_runtime, tenant, panima["id"], "The user keeps bees on the roof.", time_end=FROZEN_NOW - timedelta(days=2)
    )
    fresh = (await pclient.get(f"/api/memories/{memory}", headers=tenant.headers)).json()
    assert (fresh["recall_count"], fresh["last_recalled_at"]) == (0, None)  # never recalled: no row, not an error
    version = await _row_version(pack_runtime, memory)

    pack = await _serve_and_flush(pclient, pack_runtime, tenant, panima["id"])
    assert str(memory) in [m["id"] for m in pack["content"]["long_term_memories"]]
    assert await _row_version(pack_runtime, memory) == version  # the memory row was not rewritten
    assert await _recall_rows(pack_runtime, memory) == [(tenant.org_id, uuid.UUID(panima["id"]), 1, FROZEN_NOW)]

    one = (await pclient.get(f"/api/memories/{memory}", headers=tenant.headers)).json()
    listed = (await pclient.get("/api/memories", params={"anima_id": panima["id"]}, headers=tenant.headers)).json()
    found = (
        await pclient.post(
            "/api/memories/search/semantic",
            headers=tenant.headers,
            json={"anima_id": panima["id"], "query": "bees on the roof"},
        )
    ).json()
    for wire in (one, *listed["items"], *found):
        assert (wire["recall_count"], _at(wire["last_recalled_at"])) == (1, FROZEN_NOW), wire

    # The next bucket counts again, in the same row.
    later = FROZEN_NOW + timedelta(hours=1)
    pack_runtime.pack_state.recalls.record(pack_runtime.engine, [memory], later.replace(minute=0), later)
    assert await pack_runtime.pack_state.recalls.flush() == 1
    again = (await pclient.get(f"/api/memories/{memory}", headers=tenant.headers)).json()
    assert (again["recall_count"], _at(again["last_recalled_at"])) == (2, later)
    assert await _row_version(pack_runtime, memory) == version


async def test_recall_state_stays_in_its_tenant(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, other_tenant: Tenant, panima: dict
) -> None:
    pack_runtime.pack_state.recalls.interval = 3600
    memory = await add_memory(
        pack_runtime, tenant, panima["id"], "The user's locker code is 4417.", time_end=FROZEN_NOW - timedelta(days=1)
    )
    await _serve_and_flush(pclient, pack_runtime, tenant, panima["id"])
    assert (await pclient.get(f"/api/memories/{memory}", headers=other_tenant.headers)).status_code == 404
    theirs = (await pclient.get("/api/memories", headers=other_tenant.headers)).json()["items"]
    assert str(memory) not in [m["id"] for m in theirs]
    # An id served by another tenant's pack (or made up) adds nothing to this tenant's memory.
    stranger = await pclient.post("/api/animas", json={"name": "stranger"}, headers=other_tenant.headers)
    other_memory = await add_memory(
        pack_runtime,
        other_tenant,
        stranger.json()["id"],
        "Someone else's fact.",
        time_end=FROZEN_NOW - timedelta(days=1),
    )
    later = FROZEN_NOW + timedelta(hours=1)
    pack_runtime.pack_state.recalls.record(
        pack_runtime.engine, [other_memory, uuid.uuid4()], later.replace(minute=0), later
    )
    assert await pack_runtime.pack_state.recalls.flush() == 1
    assert await _recall_rows(pack_runtime, other_memory) == [
        (other_tenant.org_id, uuid.UUID(stranger.json()["id"]), 1, later)
    ]
    assert [r[2:] for r in await _recall_rows(pack_runtime, memory)] == [(1, FROZEN_NOW)]


async def test_removing_a_memory_removes_its_recall_row(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    pack_runtime.pack_state.recalls.interval = 3600
    first = await add_memory(
        pack_runtime, tenant, panima["id"], "The user runs on Tuesdays.", time_end=FROZEN_NOW - timedelta(days=1)
    )
    second = await add_memory(
        pack_runtime, tenant, panima["id"], "The user swims on Fridays.", time_end=FROZEN_NOW - timedelta(days=1)
    )
    await _serve_and_flush(pclient, pack_runtime, tenant, panima["id"])
    assert len(await _recall_rows(pack_runtime, first)) == len(await _recall_rows(pack_runtime, second)) == 1
    async with pack_runtime.engine.begin() as conn:  # a hard delete of one memory (as curation tooling might)
        await conn.execute(text("DELETE FROM memories WHERE id = :id"), {"id": first})
    assert await _recall_rows(pack_runtime, first) == []
    assert len(await _recall_rows(pack_runtime, second)) == 1
    async with pack_runtime.unit_of_work() as session:  # erasure: every row of the anima
        await purge_anima(session, tenant.org_id, uuid.UUID(panima["id"]), pack_runtime.anima_purge_hooks)
    assert await _recall_rows(pack_runtime, second) == []


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_query_compiles_score_without_reading_recall_state(preset: str) -> None:
    """With a query every preset weighs decay 0, so the long-term statement's scoring arms are built
    without memory_recalls: it is read only for the union's rows (the final read by primary key)."""
    config = get_preset(preset)
    query = "what does the user cook"
    scope = cands.Scope(uuid.uuid4(), uuid.uuid4(), FROZEN_NOW, query, None, compile_weights(config, query), config)
    assert not scope.uses_decay
    assert cands._long_term(True, 256, scope.uses_decay, True).text.count("memory_recalls") == 1
    # Without a query decay counts, and the four-factor arms join it to score.
    plain = cands.Scope(uuid.uuid4(), uuid.uuid4(), FROZEN_NOW, None, None, compile_weights(config, None), config)
    assert plain.uses_decay
    assert cands._long_term(False, None, plain.uses_decay, True).text.count("memory_recalls") > 1
