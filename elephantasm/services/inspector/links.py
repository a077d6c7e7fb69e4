"""Reverse provenance for the inspector: which memories an event fed, which knowledge a memory fed.

The API lists provenance forwards (memory → events, knowledge → memories); the inspector also
walks it backwards so every page links both ways. Scoped to the org; index-backed
(``ix_memory_events_event``, ``ix_knowledge_memories_memory``).
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

_MEMORIES_OF_EVENT = text("""
SELECT m.id, m.summary, m.state, m.merged_into
FROM memory_events me JOIN memories m ON m.id = me.memory_id
WHERE me.event_id = :id AND m.org_id = :org AND m.deleted_at IS NULL
ORDER BY m.created_at DESC, m.id
""")
_KNOWLEDGE_OF_MEMORY = text("""
SELECT k.id, k.type, k.content, k.valid_to
FROM knowledge_memories km JOIN knowledge k ON k.id = km.knowledge_id
WHERE km.memory_id = :id AND k.org_id = :org AND k.deleted_at IS NULL
ORDER BY k.created_at DESC, k.id
""")


async def memories_of_event(session: AsyncSession, org_id: uuid.UUID, event_id: uuid.UUID) -> list[Any]:
    """Memories (not deleted) distilled from the event, newest first: id, summary, state, merged_into."""
    return list((await session.execute(_MEMORIES_OF_EVENT, {"id": event_id, "org": org_id})).all())


async def knowledge_of_memory(session: AsyncSession, org_id: uuid.UUID, memory_id: uuid.UUID) -> list[Any]:
    """Knowledge (not deleted) drawn from the memory, newest first: id, type, content, valid_to."""
    return list((await session.execute(_KNOWLEDGE_OF_MEMORY, {"id": memory_id, "org": org_id})).all())
