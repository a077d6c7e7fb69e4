"""A memory edited by hand (``PATCH /api/memories/{id}`` and the inspector's edit form): an edit of
its text also withdraws every served copy of the old text, as forgetting does (``services/forget.py``).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from elephantasm.services.dreams import memories as svc
from elephantasm.services.forget import ForgetHook, unserve_old_text

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

TEXT_FIELDS = frozenset({"summary", "content"})
"""The fields whose change withdraws the old text's served copies."""


async def edit_memory(
    session: AsyncSession,
    org_id: uuid.UUID,
    memory_id: uuid.UUID,
    changes: dict[str, Any],
    vector: list[float] | None,
    *,
    now: datetime,
    space: int,
    hooks: Sequence[ForgetHook],
) -> tuple[Any, list[uuid.UUID]]:
    """Apply ``changes`` (already validated fields of ``MemoryUpdate``; ``vector`` embeds a new
    summary); returns the memory and its source event ids. NotFoundError for a missing or another
    org's memory."""
    if changes.keys() & TEXT_FIELDS:  # copies handed out with the old text go (served packs, KV snapshots, prompts)
        current = await svc.get_memory(session, org_id, memory_id)
        await unserve_old_text(session, org_id, current, hooks)
    row = await svc.update_memory(session, org_id, memory_id, changes, vector, now, space)
    links = await svc.provenance(session, org_id, [row.id])
    return row, links[row.id]
