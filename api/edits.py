"""The units of work the API and the inspector share for hand edits: forgetting an item and
editing a memory's text. Each commits before the caller responds (an acknowledged change is
durable), then drops this process's cached packs that quoted the old text."""

from __future__ import annotations

import uuid
from typing import Any

from elephantasm.domain.lean import lean_text
from elephantasm.runtime import Runtime
from elephantasm.services.forget import Forgotten, drop_cached, forget
from elephantasm.services.memory_edits import TEXT_FIELDS, edit_memory
from elephantasm.services.spaces import current_space


async def forget_item(runtime: Runtime, org_id: uuid.UUID, kind: str, item_id: uuid.UUID) -> Forgotten:
    """Forget a ``"memory"`` or ``"knowledge"`` item of the org (``services/forget.py``)."""
    async with runtime.unit_of_work() as session:
        done = await forget(session, org_id, kind, item_id, runtime.clock(), runtime.forget_hooks)
    drop_cached(runtime.pack_state, done.cited_ids)
    return done


async def edit_memory_of(
    runtime: Runtime, org_id: uuid.UUID, memory_id: uuid.UUID, changes: dict[str, Any]
) -> tuple[Any, list[uuid.UUID]]:
    """Apply validated ``MemoryUpdate`` fields to a memory of the org (``services/memory_edits.py``);
    returns the memory and its source event ids."""
    vector = (await runtime.embedder.embed([lean_text(changes["summary"])]))[0] if "summary" in changes else None
    space = await current_space(runtime)
    async with runtime.unit_of_work() as session:
        edited = await edit_memory(
            session, org_id, memory_id, changes, vector, now=runtime.clock(), space=space, hooks=runtime.forget_hooks
        )
    if changes.keys() & TEXT_FIELDS:
        drop_cached(runtime.pack_state, [memory_id])
    return edited
