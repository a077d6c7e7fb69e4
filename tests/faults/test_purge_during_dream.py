"""Purging an anima while a dream run works on it (issue 28, item 2): the purge answers 204 and
nothing of the anima is left; the dream ends (failed: its anima is gone) instead of deadlocking."""

from __future__ import annotations

import asyncio
import uuid

import httpx
import pytest

from elephantasm.runtime import Runtime
from tests.conftest import Tenant
from tests.dreams.helpers import add_events, turns
from tests.lifecycle.helpers import rows_of

PENDING = 3000


@pytest.mark.parametrize("delay", [0.1, 0.4])
async def test_purge_shortly_after_a_dream_started_erases_everything(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, delay: float
) -> None:
    r = await client.post("/api/animas", json={"name": "purged-while-dreaming"}, headers=tenant.headers)
    anima_id = r.json()["id"]
    texts = [f"turn {i}: I keep a note that item {i} goes on shelf {i % 97}." for i in range(PENDING)]
    await add_events(runtime, tenant.org_id, uuid.UUID(anima_id), turns(texts, step=5.0))

    r = await client.post("/api/dreams/trigger", json={"anima_id": anima_id}, headers=tenant.headers)
    assert r.status_code == 202, r.text
    await asyncio.sleep(delay)
    r = await client.delete(f"/api/animas/{anima_id}", params={"purge": "true"}, headers=tenant.headers)
    assert r.status_code == 204, r.text
    await runtime.dream_tasks.wait()

    assert set((await rows_of(runtime, anima_id)).values()) == {0}
    assert (await client.get(f"/api/animas/{anima_id}", headers=tenant.headers)).status_code == 404
