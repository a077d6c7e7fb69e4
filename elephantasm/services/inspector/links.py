"""Reverse provenance for the inspector: which memories an event fed, which knowledge a memory fed.

The API lists provenance forwards (memory → events, knowledge → memories); the inspector also
walks it backwards so every page links both ways. Scoped to the org. A memory keeps its events as an
array (``memories.event_ids``) with no index by event: the event's anima's memories
are read (``ix_memories_org_anima_state``) and their arrays tested, a scan of one anima that only
this page pays. Knowledge of a memory is index-backed (``ix_knowledge_memories_memory``).
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

_MEMORIES_OF_EVENT = text("""
SELECT m.id, m.summary, m.state, m.merged_into
FROM events e JOIN animas a ON a.key = e.anima_key AND a.org_id = :org
JOIN memories m ON m.org_id = a.org_id AND m.anima_id = a.id
WHERE e.id = :id AND m.deleted_at IS NULL AND m.event_ids @> ARRAY[e.id]
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
