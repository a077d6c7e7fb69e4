"""``insert_rows`` (one statement for many rows) stores exactly what a per-row insert stores: JSON
null for None in a JSONB column, vectors, bytes and NULLs, column defaults for keys left out; and
with ``skip_conflicts`` it skips duplicates, within the batch too."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

from sqlalchemy import insert, select, text

from elephantasm.db.bulk import insert_rows
from elephantasm.db.models import DreamAction, KnowledgeMemory, Memory
from elephantasm.db.tables import table_of
from elephantasm.runtime import Runtime
from elephantasm.schemas.animas import AnimaCreate
from elephantasm.services.animas import create_anima
from tests.conftest import Tenant

_MEMORIES, _ACTIONS, _LINKS = table_of(Memory), table_of(DreamAction), table_of(KnowledgeMemory)


async def _anima(runtime: Runtime, tenant: Tenant) -> uuid.UUID:
    async with runtime.unit_of_work() as session:
        return (await create_anima(session, tenant.org_id, AnimaCreate(name="bulk"))).id


def _memory(tenant: Tenant, anima: uuid.UUID, i: int, runtime: Runtime) -> dict[str, Any]:
    return {
        "id": uuid.uuid4(),
        "org_id": tenant.org_id,
        "anima_id": anima,
        "summary": f"summary {i}",
        "content": None if i % 2 else f"content {i}",
        "importance": 0.25 * i,
        "confidence": 0.5,
        "state": "active",
        "session_id": None,
        "time_start": runtime.clock() - timedelta(hours=i),
        "time_end": runtime.clock(),
        "meta": {"run_id": "r", "n": i, "nested": {"x": [1, None]}},
        "embedding": [0.5, -0.25, 0.125, float(i)] if i else None,
        "embedding_space": 7,
        "turn_vectors": bytes([i, 0, 255]) if i % 2 else None,
    }


def _stored(row: Any) -> tuple:
    d = row._asdict()
    d.pop("id")
    return tuple(str(v) if k == "embedding" else v for k, v in d.items())


async def test_rows_are_stored_as_a_per_row_insert_stores_them(runtime: Runtime, tenant: Tenant) -> None:
    anima = await _anima(runtime, tenant)
    bulk = [_memory(tenant, anima, i, runtime) for i in range(4)]
    rowwise = [dict(r, id=uuid.uuid4()) for r in bulk]
    run = uuid.uuid4()
    actions = [
        {
            "id": uuid.uuid4(),
            "org_id": tenant.org_id,
            "anima_id": anima,
            "run_id": run,
            "action": "created",
            "target_type": "memory",
            "target_ids": [r["id"]],
            "befores": None,
            "afters": [{"summary": r["summary"]}],
        }
        for r in bulk
    ]
    actions_rowwise = [dict(a, id=uuid.uuid4()) for a in actions]
    async with runtime.unit_of_work() as session:
        await session.execute(
            text(
                "INSERT INTO dream_runs (id, org_id, anima_id, status, trigger, engine) "
                "VALUES (:r, :o, :a, 'completed', 'test', 'offline')"
            ),
            {"r": run, "o": tenant.org_id, "a": anima},
        )
        await insert_rows(session, _MEMORIES, bulk)
        await session.execute(insert(_MEMORIES), rowwise)
        await insert_rows(session, _ACTIONS, actions)
        await session.execute(insert(_ACTIONS), actions_rowwise)
    cols = [c for c in _MEMORIES.c if c.name not in ("created_at", "updated_at")]
    async with runtime.read_session() as session:
        got = {r.id: r for r in (await session.execute(select(*cols).where(_MEMORIES.c.anima_id == anima))).all()}
        raw = {
            r.id: r.before
            for r in (
                await session.execute(
                    text("SELECT id, befores::text AS before FROM dream_actions WHERE anima_id = :a"), {"a": anima}
                )
            ).all()
        }
        created = (await session.execute(select(_ACTIONS.c.created_at).where(_ACTIONS.c.anima_id == anima))).scalars()
    for a, b in zip(bulk, rowwise, strict=True):
        assert _stored(got[a["id"]]) == _stored(got[b["id"]])
    assert got[bulk[3]["id"]].meta == bulk[3]["meta"] and got[bulk[0]["id"]].embedding is None
    assert got[bulk[1]["id"]].turn_vectors == bytes([1, 0, 255]) and got[bulk[1]["id"]].content is None
    assert {raw[a["id"]] for a in actions} == {raw[a["id"]] for a in actions_rowwise} == {"null"}  # JSON null
    assert all(c is not None for c in created)  # a key left out gets the column's default


async def test_skip_conflicts_skips_existing_and_repeated_rows(runtime: Runtime, tenant: Tenant) -> None:
    anima = await _anima(runtime, tenant)
    memories = [_memory(tenant, anima, i, runtime) for i in range(3)]
    knowledge = uuid.uuid4()
    async with runtime.unit_of_work() as session:
        await insert_rows(session, _MEMORIES, memories)
        await session.execute(
            text(
                "INSERT INTO knowledge (id, org_id, anima_id, type, content, content_hash) VALUES (:k, :o, :a, 'FACT', 'x', 'h')"
            ),
            {"k": knowledge, "o": tenant.org_id, "a": anima},
        )
        link = {"knowledge_id": knowledge, "org_id": tenant.org_id, "anima_id": anima}
        ids = [m["id"] for m in memories]
        await insert_rows(session, _LINKS, [dict(link, memory_id=ids[0])])
        await insert_rows(
            session, _LINKS, [dict(link, memory_id=m) for m in (ids[0], ids[1], ids[1], ids[2])], skip_conflicts=True
        )
    async with runtime.read_session() as session:
        stored = (await session.execute(select(_LINKS.c.memory_id).where(_LINKS.c.knowledge_id == knowledge))).scalars()
        assert sorted(stored) == sorted(ids)


async def test_array_columns_keep_each_rows_own_array(runtime: Runtime, tenant: Tenant) -> None:
    """A uuid[] column (a memory's event_ids) travels as one text literal per row: each row gets its
    own array, empty and one-element arrays included, in order."""
    anima = await _anima(runtime, tenant)
    events = [[], [uuid.uuid4()], sorted(uuid.uuid4() for _ in range(3))]
    rows = [dict(_memory(tenant, anima, i, runtime), event_ids=e) for i, e in enumerate(events)]
    async with runtime.unit_of_work() as session:
        await insert_rows(session, _MEMORIES, rows)
    async with runtime.read_session() as session:
        got = dict(
            (
                await session.execute(
                    select(_MEMORIES.c.id, _MEMORIES.c.event_ids).where(_MEMORIES.c.anima_id == anima)
                )
            ).all()
        )
    assert [got[r["id"]] for r in rows] == events
