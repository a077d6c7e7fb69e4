"""Helpers for pack tests: write memories/knowledge/identity as the dreamer would, read packs."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

import httpx
from sqlalchemy import insert, select

from elephantasm.db.models import Identity, Knowledge, KnowledgeMemory, Memory, MemoryRecall
from elephantasm.domain.lean import lean_text
from elephantasm.runtime import Runtime
from elephantasm.schemas.events import EventCreate
from elephantasm.services.animas import bump_state_version
from elephantasm.services.dreams import run_dream
from elephantasm.services.events import record_events
from elephantasm.services.spaces import current_space
from tests.conftest import Tenant


def latest_url(anima_id: str | uuid.UUID) -> str:
    """Path of ``latest`` for an anima."""
    return f"/api/animas/{anima_id}/memory-packs/latest"


async def extract(client: httpx.AsyncClient, tenant: Tenant, anima_id: str, content: str, **fields: Any) -> dict:
    """Record one event over the API; returns it."""
    body = {"anima_id": anima_id, "event_type": "message.in", "role": "user", "content": content, **fields}
    r = await client.post("/api/events", json=body, headers=tenant.headers)
    assert r.status_code == 201, r.text
    return r.json()


async def latest(client: httpx.AsyncClient, tenant: Tenant, anima_id: str, **params: Any) -> httpx.Response:
    """GET latest (200 expected)."""
    r = await client.get(latest_url(anima_id), params=params, headers=tenant.headers)
    assert r.status_code == 200, r.text
    return r


async def compile_json(client: httpx.AsyncClient, tenant: Tenant, body: dict) -> dict:
    """POST /api/packs/compile (200 expected); returns the pack."""
    r = await client.post("/api/packs/compile", json=body, headers=tenant.headers)
    assert r.status_code == 200, r.text
    return r.json()


async def add_memory(
    runtime: Runtime,
    tenant: Tenant,
    anima_id: str | uuid.UUID,
    summary: str,
    *,
    time_end: datetime,
    importance: float = 0.5,
    confidence: float = 0.5,
    session_id: str | None = None,
    event_ids: Sequence[str | uuid.UUID] = (),
    state: str = "active",
) -> uuid.UUID:
    """Insert a memory (with embedding and provenance) and bump the anima's state, as a dream would."""
    anima = uuid.UUID(str(anima_id))
    (embedding,) = await runtime.embedder.embed([lean_text(summary)])  # as the dreamer embeds it
    memory_id = uuid.uuid4()
    async with runtime.unit_of_work() as session:
        await session.execute(
            insert(Memory).values(
                id=memory_id,
                org_id=tenant.org_id,
                anima_id=anima,
                summary=summary,
                importance=importance,
                confidence=confidence,
                state=state,
                session_id=session_id,
                time_start=time_end,
                time_end=time_end,
                embedding=embedding,
                embedding_space=await current_space(runtime),
                created_at=time_end,
                updated_at=time_end,
                event_ids=sorted({uuid.UUID(str(e)) for e in event_ids}),
            )
        )
        await bump_state_version(session, [anima])
    return memory_id


async def add_knowledge(
    runtime: Runtime,
    tenant: Tenant,
    anima_id: str | uuid.UUID,
    content: str,
    *,
    type_: str = "FACT",
    memory_ids: Sequence[uuid.UUID] = (),
    superseded: bool = False,
    importance: float = 0.6,
) -> uuid.UUID:
    """Insert a knowledge item (optionally already superseded) and bump the anima's state."""
    anima = uuid.UUID(str(anima_id))
    (embedding,) = await runtime.embedder.embed([content])
    kid = uuid.uuid4()
    async with runtime.unit_of_work() as session:
        await session.execute(
            insert(Knowledge).values(
                id=kid,
                org_id=tenant.org_id,
                anima_id=anima,
                type=type_,
                topic="test",
                content=content,
                content_hash=hashlib.sha256(content.encode()).hexdigest(),
                importance=importance,
                confidence=0.8,
                embedding=embedding,
                embedding_space=await current_space(runtime),
                valid_to=runtime.clock() if superseded else None,
            )
        )
        for mid in memory_ids:
            await session.execute(
                insert(KnowledgeMemory).values(knowledge_id=kid, memory_id=mid, org_id=tenant.org_id, anima_id=anima)
            )
        await bump_state_version(session, [anima])
    return kid


async def set_identity(runtime: Runtime, tenant: Tenant, anima_id: str | uuid.UUID, **fields: Any) -> None:
    """Create the anima's identity row and bump its state."""
    anima = uuid.UUID(str(anima_id))
    async with runtime.unit_of_work() as session:
        # A dict, not keywords: the identity's ``self`` column collides with values()'s own self.
        await session.execute(
            insert(Identity).values({"id": uuid.uuid4(), "org_id": tenant.org_id, "anima_id": anima, **fields})
        )
        await bump_state_version(session, [anima])


async def recall_state(runtime: Runtime, memory_id: uuid.UUID) -> tuple[int, datetime | None]:
    """(recall_count, last_recalled_at) of a memory, as stored (memory_recalls; no row: (0, None))."""
    async with runtime.read_session() as session:
        row = (
            await session.execute(
                select(MemoryRecall.recall_count, MemoryRecall.last_recalled_at).where(
                    MemoryRecall.memory_id == memory_id
                )
            )
        ).one_or_none()
    return (0, None) if row is None else (row[0], row[1])


async def dream_lisbon_turns(runtime: Runtime, org_id: uuid.UUID, anima_id: uuid.UUID) -> None:
    """Record four user turns about moving to Lisbon (one session each, hours apart) and dream them:
    the run completes and creates memories."""
    events = [
        EventCreate(anima_id=anima_id, event_type="message.in", role="user", content=f"I moved to Lisbon, note {i}.",
                    session_id=f"s{i}", occurred_at=runtime.clock() - timedelta(hours=10 - i))
        for i in range(4)
    ]  # fmt: skip
    async with runtime.unit_of_work() as session:
        await record_events(session, org_id, events, runtime.clock())
    run = await run_dream(runtime.dreams, org_id, anima_id)
    assert run.status == "completed" and run.memories_created
