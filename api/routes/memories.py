"""``/api/memories``: read, search, edit and delete distilled memories."""

from __future__ import annotations

import uuid

from litestar import Controller, delete, get, patch, post
from litestar.params import FromPath, FromQuery, JSONBody
from litestar.status_codes import HTTP_200_OK, HTTP_204_NO_CONTENT

from api.deps import CallerDep, Cursor, Limit, RuntimeDep, one_of_param, parse_enum, parse_uuid
from api.edits import edit_memory_of, forget_item
from api.guards import check_json
from api.scopes import READ_ONLY
from elephantasm.domain.enums import MemoryState
from elephantasm.schemas.common import Page
from elephantasm.schemas.events import EventRead
from elephantasm.schemas.memories import MemoryRead, MemorySearch, MemoryUpdate
from elephantasm.services.dreams import memories as svc
from elephantasm.services.spaces import current_space


class MemoryController(Controller):
    """Memories with their provenance (the ids of the events each was distilled from)."""

    path = "/api/memories"
    tags = ["memories"]

    @get("/")
    async def list_memories(
        self,
        caller: CallerDep,
        runtime: RuntimeDep,
        anima_id: FromQuery[uuid.UUID | None] = None,
        memory_state: one_of_param(MemoryState, name="state") = None,  # type: ignore[valid-type]
        limit: Limit = 100,
        cursor: Cursor = None,
    ) -> Page[MemoryRead]:
        """Memories, most recent experience first, optionally of one anima and state."""
        state = parse_enum(MemoryState, "state", memory_state)
        async with runtime.read_session() as session:
            rows, next_cursor = await svc.list_memories(session, caller.org_id, anima_id, state, limit, cursor)
            links = await svc.provenance(session, caller.org_id, [r.id for r in rows])
        return Page[MemoryRead](items=[MemoryRead.of(r, links[r.id]) for r in rows], next_cursor=next_cursor)

    @get("/{memory_id:str}")
    async def get_memory(self, memory_id: FromPath[str], caller: CallerDep, runtime: RuntimeDep) -> MemoryRead:
        """One memory."""
        async with runtime.read_session() as session:
            row = await svc.get_memory(session, caller.org_id, parse_uuid("memory_id", memory_id))
            links = await svc.provenance(session, caller.org_id, [row.id])
        return MemoryRead.of(row, links[row.id])

    @patch("/{memory_id:str}")
    async def update_memory(
        self, memory_id: FromPath[str], data: JSONBody[MemoryUpdate], caller: CallerDep, runtime: RuntimeDep
    ) -> MemoryRead:
        """Edit summary, content, importance, confidence, state or meta; a new summary is re-embedded.
        A text edit also withdraws every served copy of the old text (pack history, KV snapshots)."""
        mid = parse_uuid("memory_id", memory_id)
        check_json(data, runtime)
        changes = data.model_dump(exclude_unset=True)
        row, links = await edit_memory_of(runtime, caller.org_id, mid, changes)
        return MemoryRead.of(row, links)

    @delete("/{memory_id:str}", status_code=HTTP_204_NO_CONTENT)
    async def delete_memory(self, memory_id: FromPath[str], caller: CallerDep, runtime: RuntimeDep) -> None:
        """Forget a memory: it, the memories merged into it and the knowledge learnt only from it leave
        every list, search, pack and served-pack history; their text is scrubbed (events stay)."""
        await forget_item(runtime, caller.org_id, "memory", parse_uuid("memory_id", memory_id))

    @get("/{memory_id:str}/events")
    async def memory_events(self, memory_id: FromPath[str], caller: CallerDep, runtime: RuntimeDep) -> list[EventRead]:
        """The events the memory was distilled from, in time order."""
        async with runtime.read_session() as session:
            events = await svc.memory_events(session, caller.org_id, parse_uuid("memory_id", memory_id))
        return [EventRead.model_validate(e) for e in events]

    @post("/search/semantic", status_code=HTTP_200_OK, opt=READ_ONLY)
    async def search(self, data: JSONBody[MemorySearch], caller: CallerDep, runtime: RuntimeDep) -> list[MemoryRead]:
        """Memories of one anima nearest in meaning to ``query``, best first, with ``similarity``."""
        (vector,) = await runtime.embedder.embed([data.query])
        async with runtime.read_session() as session:
            hits = await svc.search_memories(
                session,
                caller.org_id,
                data.anima_id,
                vector,
                data.limit,
                data.include_archived,
                data.min_similarity,
                await current_space(runtime),
            )
            links = await svc.provenance(session, caller.org_id, [row.id for row, _ in hits])
        return [MemoryRead.of(row, links[row.id], sim) for row, sim in hits]
