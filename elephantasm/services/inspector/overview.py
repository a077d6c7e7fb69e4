"""Per-anima figures for the inspector's anima pages: row counts by kind and state, in one statement.

Every count is scoped by ``org_id`` and ``anima_id`` (the leading columns of each table's index),
and runs only for the animas on the page being shown, never for the whole org. Counting is linear
in rows, so a list of many large animas passes ``cap``: each count stops there (shown as "cap+"),
which bounds the page's work by (animas × cap) however big the animas grow.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from elephantasm.services import event_state

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
    return {
        r.id: AnimaCounts(
            r.events, r.pending, r.active, r.decaying, r.archived, r.knowledge, r.dream_runs, r.identity_version
        )
        for r in rows
    }
