"""Reverse provenance for the inspector: which memories an event fed, which knowledge a memory fed.

The API lists provenance forwards (memory → events, knowledge → memories); the inspector also
walks it backwards so every page links both ways. Scoped to the org; index-backed
(``ix_memory_events_event``, ``ix_knowledge_memories_memory``).
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from elephantasm.db.models import Knowledge, KnowledgeMemory, Memory, MemoryEvent


async def memories_of_event(session: AsyncSession, org_id: uuid.UUID, event_id: uuid.UUID) -> list[Any]:
    """Memories (not deleted) distilled from the event, newest first: id, summary, state, merged_into."""
    stmt = (
        select(Memory.id, Memory.summary, Memory.state, Memory.merged_into)
        .join(MemoryEvent, MemoryEvent.memory_id == Memory.id)
        .where(MemoryEvent.event_id == event_id, Memory.org_id == org_id, Memory.deleted_at.is_(None))
        .order_by(Memory.created_at.desc(), Memory.id)
    )
    return list((await session.execute(stmt)).all())


async def knowledge_of_memory(session: AsyncSession, org_id: uuid.UUID, memory_id: uuid.UUID) -> list[Any]:
    """Knowledge (not deleted) drawn from the memory, newest first: id, type, content, valid_to."""
    stmt = (
        select(Knowledge.id, Knowledge.type, Knowledge.content, Knowledge.valid_to)
        .join(KnowledgeMemory, KnowledgeMemory.knowledge_id == Knowledge.id)
        .where(KnowledgeMemory.memory_id == memory_id, Knowledge.org_id == org_id, Knowledge.deleted_at.is_(None))
        .order_by(Knowledge.created_at.desc(), Knowledge.id)
    )
    return list((await session.execute(stmt)).all())
