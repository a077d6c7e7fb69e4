"""The batched journal reads as the per-entry one did: ``GET /api/dreams/sessions/{id}`` returns the
entries in (created_at, action, written) order with unique ids, its ``actions_limit`` cuts that list
(also inside a row), ``action_count`` counts entries; forgetting one target scrubs only its entries."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import httpx

from elephantasm.db.queries.forgetting import redact_journal
from elephantasm.runtime import Runtime
from elephantasm.services.dreams.journal import journaled_write
from elephantasm.services.dreams.runs import RunStats, start_run
from tests.conftest import Tenant
from tests.dreams.helpers import new_anima, variant

NOW = datetime(2026, 5, 1, 12, tzinfo=UTC)


def _steps(anima_id: uuid.UUID) -> list[list[tuple[str, str, Any, Any, Any]]]:
    t = [uuid.uuid4() for _ in range(6)]
    return [
        [("created", "memory", t[0], None, {"events": 1, "importance": 0.5}),
         ("created", "memory", t[1], None, {"events": 2, "importance": 0.25}),
         ("archived", "memory", t[2], {"state": "active"}, {"state": "archived"}),
         ("created", "knowledge", t[3], None, {"content": "User likes teal."}),
         ("created", "memory", t[4], None, {"events": 3, "importance": 0.75})],
        # a second step at the same clock reading: its entries sort among the first's by action
        [("created", "memory", t[5], None, {"events": 4, "importance": 0.1}),
         ("updated", "identity", anima_id, None, {"version": 1})],
    ]  # fmt: skip


async def _journal(runtime: Runtime, tenant: Tenant) -> tuple[uuid.UUID, list[tuple]]:
    anima_id = await new_anima(runtime, tenant.org_id)
    rt = variant(runtime)
    rt.clock = lambda: NOW  # type: ignore[method-assign]
    run = await start_run(rt.dreams, tenant.org_id, anima_id, "test")
    written = []
    for entries in _steps(anima_id):
        async with journaled_write(rt.dreams, run, RunStats()) as step:
            step.actions += [step.ctx.action(*e) for e in entries]
        written += entries
    await rt.dream_tasks.run_locks.release(run.id)  # the run's lock holds a pooled connection until released
    order = sorted(range(len(written)), key=lambda i: (written[i][0], i))
    return run.id, [written[i] for i in order]


def _wire(a: dict) -> tuple:
    return a["action"], a["target_type"], uuid.UUID(a["target_id"]), a["before"], a["after"]


async def test_journal_reads_in_order_at_every_limit(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    run_id, expected = await _journal(runtime, tenant)
    full = (
        await client.get(f"/api/dreams/sessions/{run_id}", params={"actions_limit": 100}, headers=tenant.headers)
    ).json()
    assert full["action_count"] == len(expected) == 7
    assert [_wire(a) for a in full["actions"]] == expected
    ids = [a["id"] for a in full["actions"]]
    assert len(set(ids)) == len(ids)
    assert {a["created_at"] for a in full["actions"]} == {NOW.isoformat().replace("+00:00", "Z")}
    for limit in range(len(expected) + 1):
        r = await client.get(f"/api/dreams/sessions/{run_id}", params={"actions_limit": limit}, headers=tenant.headers)
        assert r.json()["actions"] == full["actions"][:limit] and r.json()["action_count"] == 7
    again = (await client.get(f"/api/dreams/sessions/{run_id}", headers=tenant.headers)).json()
    assert again["actions"] == full["actions"]  # ids are stable across reads


async def test_forgetting_one_target_scrubs_only_its_entries(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    run_id, expected = await _journal(runtime, tenant)
    gone = expected[1][2]  # the second memory of the first step's "created" row
    url = f"/api/dreams/sessions/{run_id}"
    before = (await client.get(url, headers=tenant.headers)).json()
    async with runtime.unit_of_work() as session:
        assert await redact_journal(session, uuid.uuid4(), [gone]) == 0  # another anima's journal is never touched
        await redact_journal(session, uuid.UUID(before["anima_id"]), [gone])
    after = (await client.get(url, headers=tenant.headers)).json()["actions"]
    changed = [(b, a) for b, a in zip(before["actions"], after, strict=True) if b != a]
    assert [(b["target_id"], a["before"], a["after"]) for b, a in changed] == [
        (str(gone), {"forgotten": True}, {"forgotten": True})
    ]
    assert [a["id"] for a in after] == [b["id"] for b in before["actions"]]
