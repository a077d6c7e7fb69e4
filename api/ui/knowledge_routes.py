"""Inspector pages: an anima's knowledge, and one item with its supersession history."""

from __future__ import annotations

from itertools import pairwise
from typing import Annotated, Any

from litestar import Controller, Response, get
from litestar.params import FromPath, QueryParameter

from api.deps import Cursor, RuntimeDep
from api.ui.deps import UiUserDep, choice, ui_id
from api.ui.render import PAGE_SIZE, page
from elephantasm.db.models import KNOWLEDGE_TYPES
from elephantasm.services import animas as anima_svc
from elephantasm.services.dreams import queries as knowledge_svc


def transitions(chain: list[Any], provenance: dict) -> list[dict[str, Any]]:  # type: ignore[type-arg]
    """Consecutive versions of a newest-first chain as ``old → new`` steps, oldest step first:
    when the new value took over and the memories it was drawn from."""
    steps = []
    for new, old in pairwise(chain):
        steps.append(
            {
                "old": old,
                "new": new,
                "when": new.valid_from or old.valid_to or new.created_at,
                "memories": provenance.get(new.id, ([], []))[0],
            }
        )
    return list(reversed(steps))


class KnowledgePages(Controller):
    """``/ui/animas/{id}/knowledge`` and ``/ui/knowledge/{id}``."""

    path = "/"

    @get("/animas/{anima_id:str}/knowledge")
    async def knowledge(
        self,
        anima_id: FromPath[str],
        ui: UiUserDep,
        runtime: RuntimeDep,
        type: Annotated[str | None, QueryParameter(max_length=16)] = None,
        superseded: Annotated[bool, QueryParameter(description="Include superseded items.")] = False,
        forgotten: Annotated[str | None, QueryParameter(max_length=36)] = None,
        cursor: Cursor = None,
    ) -> Response:
        """Current knowledge, newest first, 50 a page (superseded items too when asked)."""
        aid = ui_id("anima", anima_id)
        type_ = choice("type", type, KNOWLEDGE_TYPES)
        async with runtime.read_session() as session:
            anima = await anima_svc.get_anima(session, ui.caller.org_id, aid)
            rows, next_cursor = await knowledge_svc.list_knowledge(
                session, ui.caller.org_id, aid, type_, None, superseded, PAGE_SIZE, cursor
            )
            prov = await knowledge_svc.knowledge_provenance(session, ui.caller.org_id, [r.id for r in rows])
        return page(
            "knowledge_list.html",
            ui=ui,
            anima=anima,
            items=rows,
            prov=prov,
            type=type_ or "",
            types=KNOWLEDGE_TYPES,
            superseded=superseded,
            forgotten=forgotten,
            next_cursor=next_cursor,
            cursor=cursor,
            tab="knowledge",
        )

    @get("/knowledge/{knowledge_id:str}")
    async def item(self, knowledge_id: FromPath[str], ui: UiUserDep, runtime: RuntimeDep) -> Response:
        """One item and its whole chain: each old → new value, when, and from which memories."""
        kid = ui_id("knowledge", knowledge_id)
        async with runtime.read_session() as session:
            row = await knowledge_svc.get_knowledge(session, ui.caller.org_id, kid)
            anima = await anima_svc.get_anima(session, ui.caller.org_id, row.anima_id)
            chain = await knowledge_svc.knowledge_history(session, ui.caller.org_id, kid)
            prov = await knowledge_svc.knowledge_provenance(session, ui.caller.org_id, [r.id for r in chain])
        return page(
            "knowledge.html",
            ui=ui,
            anima=anima,
            item=row,
            chain=chain,
            prov=prov,
            steps=transitions(chain, prov),
            tab="knowledge",
        )
