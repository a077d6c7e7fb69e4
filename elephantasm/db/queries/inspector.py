"""The inspector's read models (``/ui``): per-anima counts (each stopped at a ``cap``, so a page's
work is bounded by animas × cap) and provenance walked backwards, so every page links both ways
(memories of an event scan that anima's memories: their event arrays have no index by event).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, select, text
from sqlalchemy.dialects.postgresql import array
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from elephantasm.db import event_state
from elephantasm.db.models import Anima, Event, Knowledge, KnowledgeMemory, Memory

# Text: the counts share the ``pending`` fragment (``db/event_state``) with every reader of event state.
_COUNTS_SQL = text(f"""
SELECT a.id,
  (SELECT count(*) FROM (SELECT 1 FROM events e WHERE e.anima_key = a.key LIMIT :cap) s) AS events,
  (SELECT count(*) FROM (SELECT 1 FROM events e WHERE e.anima_key = a.key AND {event_state.pending("e", "a")}
     LIMIT :cap) s) AS pending,
  m.active, m.decaying, m.archived,
  (SELECT count(*) FROM (SELECT 1 FROM knowledge k WHERE k.org_id = a.org_id AND k.anima_id = a.id
     AND k.deleted_at IS NULL AND k.valid_to IS NULL AND k.superseded_by IS NULL LIMIT :cap) s) AS knowledge,
  (SELECT count(*) FROM (SELECT 1 FROM dream_runs r WHERE r.org_id = a.org_id AND r.anima_id = a.id LIMIT :cap) s)
    AS dream_runs,
  (SELECT i.version FROM identities i WHERE i.anima_id = a.id) AS identity_version
FROM animas a
CROSS JOIN LATERAL (
  SELECT count(*) FILTER (WHERE state = 'active') AS active, count(*) FILTER (WHERE state = 'decaying') AS decaying,
         count(*) FILTER (WHERE state = 'archived') AS archived
  FROM (SELECT m.state FROM memories m WHERE m.org_id = a.org_id AND m.anima_id = a.id AND m.deleted_at IS NULL
        AND m.merged_into IS NULL LIMIT :cap) m
) m
WHERE a.org_id = :org AND a.id = ANY(:ids) AND a.deleted_at IS NULL
""")


@dataclass(frozen=True, slots=True)
class AnimaCounts:
    """What an anima holds: events (and how many await the dreamer), live memories by state,
    current knowledge, dream runs, and its identity version (None before the first)."""

    events: int = 0
    pending: int = 0
    active: int = 0
    decaying: int = 0
    archived: int = 0
    knowledge: int = 0
    dream_runs: int = 0
    identity_version: int | None = None

    @property
    def memories(self) -> int:
        """Live memories in any state."""
        return self.active + self.decaying + self.archived


async def anima_counts(
    session: AsyncSession, org_id: uuid.UUID, anima_ids: Sequence[uuid.UUID], cap: int | None = None
) -> dict[uuid.UUID, AnimaCounts]:
    """Counts for each of ``anima_ids`` that is a live anima of ``org_id`` (others are absent);
    with ``cap``, each count stops at ``cap`` (memories: their total across states)."""
    if not anima_ids:
        return {}
    rows = await session.execute(_COUNTS_SQL, {"org": org_id, "ids": list(anima_ids), "cap": cap})
    return {r.id: AnimaCounts(*r[1:]) for r in rows}  # the columns after the id are AnimaCounts' fields, in order


async def memories_of_event(session: AsyncSession, org_id: uuid.UUID, event_id: uuid.UUID) -> list[Any]:
    """Memories (not deleted) distilled from the event, newest first: id, summary, state, merged_into."""
    stmt = (
        select(col(Memory.id), col(Memory.summary), col(Memory.state), col(Memory.merged_into))
        .select_from(Event)
        .join(Anima, and_(col(Anima.key) == col(Event.anima_key), col(Anima.org_id) == org_id))
        .join(Memory, and_(col(Memory.org_id) == col(Anima.org_id), col(Memory.anima_id) == col(Anima.id)))
        .where(
            col(Event.id) == event_id,
            col(Memory.deleted_at).is_(None),
            col(Memory.event_ids).contains(array([col(Event.id)])),
        )
        .order_by(col(Memory.created_at).desc(), col(Memory.id))
    )
    return list((await session.execute(stmt)).all())


async def knowledge_of_memory(session: AsyncSession, org_id: uuid.UUID, memory_id: uuid.UUID) -> list[Any]:
    """Knowledge (not deleted) drawn from the memory, newest first: id, type, content, valid_to."""
    stmt = (
        select(col(Knowledge.id), col(Knowledge.type), col(Knowledge.content), col(Knowledge.valid_to))
        .join_from(KnowledgeMemory, Knowledge, col(Knowledge.id) == col(KnowledgeMemory.knowledge_id))
        .where(
            col(KnowledgeMemory.memory_id) == memory_id,
            col(Knowledge.org_id) == org_id,
            col(Knowledge.deleted_at).is_(None),
        )
        .order_by(col(Knowledge.created_at).desc(), col(Knowledge.id))
    )
    return list((await session.execute(stmt)).all())
