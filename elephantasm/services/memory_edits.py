"""A memory edited by hand (the API's ``PATCH /api/memories/{id}`` and the inspector's edit form).

A new summary is re-embedded; an edit of the text also withdraws every served copy of the old text
(pack history, KV snapshots, recorded prompts) in the same transaction, and this process's cached
packs holding it after the commit (``services/forget.py``).
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from elephantasm.domain.lean import lean_text
from elephantasm.services.dreams import memories as svc
from elephantasm.services.forget import drop_cached, unserve_old_text
from elephantasm.services.spaces import current_space

if TYPE_CHECKING:
    from elephantasm.runtime import Runtime


async def edit_memory(
    runtime: Runtime, org_id: uuid.UUID, memory_id: uuid.UUID, changes: dict[str, Any]
) -> tuple[Any, list[uuid.UUID]]:
    """Apply ``changes`` (already validated fields of ``MemoryUpdate``); returns the memory and its
    source event ids. NotFoundError for a missing or another org's memory."""
    vector = (await runtime.embedder.embed([lean_text(changes["summary"])]))[0] if "summary" in changes else None
    edits_text = bool(changes.keys() & {"summary", "content"})
    async with runtime.unit_of_work() as session:
        if edits_text:  # copies handed out with the old text go (served packs, KV snapshots, prompts)
            current = await svc.get_memory(session, org_id, memory_id)
            await unserve_old_text(runtime, session, org_id, current)
        row = await svc.update_memory(
            session, org_id, memory_id, changes, vector, runtime.clock(), await current_space(runtime)
        )
        links = await svc.provenance(session, org_id, [row.id])
    if edits_text:
        drop_cached(runtime, [memory_id])
    return row, links[row.id]
