"""``/api/knowledge``: durable statements, their provenance and their supersession history."""

from __future__ import annotations

import uuid

from litestar import Controller, delete, get, post
from litestar.params import FromPath, FromQuery, JSONBody
from litestar.status_codes import HTTP_200_OK, HTTP_204_NO_CONTENT

from api.deps import CallerDep, Cursor, Limit, RuntimeDep, one_of_param, parse_enum, parse_uuid
from api.edits import forget_item
from api.scopes import READ_ONLY
from elephantasm.domain.enums import KnowledgeType
from elephantasm.schemas.common import Page
from elephantasm.schemas.knowledge import KnowledgeRead, KnowledgeSearch
from elephantasm.services.dreams import queries as svc
from elephantasm.services.spaces import current_space


class KnowledgeController(Controller):
    """Knowledge items; by default only current ones (superseded items stay readable as history)."""

    path = "/api/knowledge"
    tags = ["knowledge"]

    @get("/")
    async def list_knowledge(
        self,
        caller: CallerDep,
        runtime: RuntimeDep,
        anima_id: FromQuery[uuid.UUID | None] = None,
        type: one_of_param(KnowledgeType) = None,  # type: ignore[valid-type]
        topic: FromQuery[str | None] = None,
        include_superseded: FromQuery[bool] = False,
        limit: Limit = 100,
        cursor: Cursor = None,
    ) -> Page[KnowledgeRead]:
        """Knowledge, newest first, optionally of one anima, type (FACT…EXPERIENCE) and topic."""
        kind = parse_enum(KnowledgeType, "type", type)
        async with runtime.read_session() as session:
            rows, next_cursor = await svc.list_knowledge(
                session, caller.org_id, anima_id, kind, topic, include_superseded, limit, cursor
            )
            prov = await svc.knowledge_provenance(session, caller.org_id, [r.id for r in rows])
        return Page[KnowledgeRead](items=[KnowledgeRead.of(r, prov[r.id]) for r in rows], next_cursor=next_cursor)

    @get("/{knowledge_id:str}")
    async def get_knowledge(self, knowledge_id: FromPath[str], caller: CallerDep, runtime: RuntimeDep) -> KnowledgeRead:
        """One knowledge item, current or superseded."""
        async with runtime.read_session() as session:
            row = await svc.get_knowledge(session, caller.org_id, parse_uuid("knowledge_id", knowledge_id))
            prov = await svc.knowledge_provenance(session, caller.org_id, [row.id])
        return KnowledgeRead.of(row, prov[row.id])

    @delete("/{knowledge_id:str}", status_code=HTTP_204_NO_CONTENT)
    async def delete_knowledge(self, knowledge_id: FromPath[str], caller: CallerDep, runtime: RuntimeDep) -> None:
        """Forget a knowledge item (current or superseded): it leaves every list, search, pack and
        served-pack history, and its text is scrubbed; the memories it came from stay."""
        await forget_item(runtime, caller.org_id, "knowledge", parse_uuid("knowledge_id", knowledge_id))

    @get("/{knowledge_id:str}/history")
    async def history(self, knowledge_id: FromPath[str], caller: CallerDep, runtime: RuntimeDep) -> list[KnowledgeRead]:
        """The item's supersession chain, newest first: the current version and every one it replaced."""
        async with runtime.read_session() as session:
            rows = await svc.knowledge_history(session, caller.org_id, parse_uuid("knowledge_id", knowledge_id))
            prov = await svc.knowledge_provenance(session, caller.org_id, [r.id for r in rows])
        return [KnowledgeRead.of(r, prov[r.id]) for r in rows]

    @post("/search/semantic", status_code=HTTP_200_OK, opt=READ_ONLY)
    async def search(
        self, data: JSONBody[KnowledgeSearch], caller: CallerDep, runtime: RuntimeDep
    ) -> list[KnowledgeRead]:
        """Knowledge of one anima nearest in meaning to ``query``, best first, with ``similarity``."""
        (vector,) = await runtime.embedder.embed([data.query])
        async with runtime.read_session() as session:
            hits = await svc.search_knowledge(
                session,
                caller.org_id,
                data.anima_id,
                vector,
                data.limit,
                data.include_superseded,
                data.min_similarity,
                await current_space(runtime),
            )
            prov = await svc.knowledge_provenance(session, caller.org_id, [row.id for row, _ in hits])
        return [KnowledgeRead.of(row, prov[row.id], sim) for row, sim in hits]
