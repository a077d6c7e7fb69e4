"""Inspector pages: an anima's memories (list or semantic search) and one memory with provenance."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from litestar import Controller, Response, get, post
from litestar.params import FromPath, QueryParameter

from api.deps import Cursor, RuntimeDep
from api.edits import edit_memory_of
from api.ui.deps import UiUserDep, choice, ui_id
from api.ui.forms import Form, see_other, textarea, validated
from api.ui.render import PAGE_SIZE, page
from elephantasm.db.models import MEMORY_STATES
from elephantasm.domain.presets import get_preset
from elephantasm.domain.scoring import quantise
from elephantasm.runtime import Runtime
from elephantasm.schemas.memories import MemoryUpdate
from elephantasm.services import animas as anima_svc
from elephantasm.services.dreams import memories as memory_svc
from elephantasm.services.inspector import knowledge_of_memory, memory_factors
from elephantasm.services.spaces import current_space


@dataclass
class EditForm:
    """The memory's edit form: its texts as shown, possibly changed."""

    summary: str = ""
    content: str = ""


def _changed_texts(memory: object, data: EditForm) -> dict[str, str | None]:
    """The texts the form changed (an emptied content clears it), checked by the API's MemoryUpdate."""
    summary, content = textarea(data.summary), textarea(data.content) or None
    fields = {
        name: value for name, value in (("summary", summary), ("content", content)) if value != getattr(memory, name)
    }
    return validated(MemoryUpdate, **fields).model_dump(exclude_unset=True)


def _factors(runtime: Runtime, rows: list) -> dict:  # type: ignore[type-arg]
    """Each memory's four factors now (the default preset's half-lives, this hour's as_of bucket)."""
    config, as_of = get_preset(None), quantise(runtime.clock(), runtime.settings.as_of_bucket_seconds)
    return {row.id: memory_factors(row, config, as_of) for row in rows}


class MemoryPages(Controller):
    """``/ui/animas/{id}/memories`` and ``/ui/memories/{id}``."""

    path = "/"

    @get("/animas/{anima_id:str}/memories")
    async def memories(
        self,
        anima_id: FromPath[str],
        ui: UiUserDep,
        runtime: RuntimeDep,
        memory_state: Annotated[str | None, QueryParameter(name="state", max_length=16)] = None,
        q: Annotated[str | None, QueryParameter(max_length=2000)] = None,
        forgotten: Annotated[str | None, QueryParameter(max_length=36)] = None,
        cursor: Cursor = None,
    ) -> Response:
        """Newest experiences first, 50 a page; with ``q``, the 50 nearest in meaning (the API's search)."""
        aid = ui_id("anima", anima_id)
        state, q = choice("state", memory_state, MEMORY_STATES), (q or "").strip() or None
        similarity: dict = {}
        next_cursor = None
        vector = (await runtime.embedder.embed([q]))[0] if q else None
        async with runtime.read_session() as session:
            anima = await anima_svc.get_anima(session, ui.caller.org_id, aid)
            if vector is not None:
                hits = await memory_svc.search_memories(
                    session,
                    ui.caller.org_id,
                    aid,
                    vector,
                    PAGE_SIZE,
                    include_archived=state in (None, "archived"),
                    space=await current_space(runtime),
                )
                rows = [row for row, _ in hits if state is None or row.state == state]
                similarity = {row.id: sim for row, sim in hits}
            else:
                rows, next_cursor = await memory_svc.list_memories(
                    session, ui.caller.org_id, aid, state, PAGE_SIZE, cursor
                )
            links = await memory_svc.provenance(session, ui.caller.org_id, [r.id for r in rows])
        return page(
            "memories.html",
            ui=ui,
            anima=anima,
            memories=rows,
            factors=_factors(runtime, rows),
            links=links,
            similarity=similarity,
            state=state or "",
            q=q or "",
            states=MEMORY_STATES,
            forgotten=forgotten,
            next_cursor=next_cursor,
            cursor=cursor,
            tab="memories",
        )

    @get("/memories/{memory_id:str}")
    async def memory(
        self,
        memory_id: FromPath[str],
        ui: UiUserDep,
        runtime: RuntimeDep,
        edited: Annotated[int | None, QueryParameter(ge=0, le=1)] = None,
    ) -> Response:
        """One memory: text, state, factors, the events it came from, the knowledge drawn from it."""
        mid = ui_id("memory", memory_id)
        async with runtime.read_session() as session:
            row = await memory_svc.get_memory(session, ui.caller.org_id, mid)
            anima = await anima_svc.get_anima(session, ui.caller.org_id, row.anima_id)
            events = await memory_svc.memory_events(session, ui.caller.org_id, mid)
            knowledge = await knowledge_of_memory(session, ui.caller.org_id, mid)
        return page(
            "memory.html",
            ui=ui,
            anima=anima,
            memory=row,
            factors=_factors(runtime, [row])[row.id],
            events=events,
            knowledge=knowledge,
            edited=edited,
            tab="memories",
        )

    @post("/memories/{memory_id:str}/edit")
    async def edit(
        self, memory_id: FromPath[str], ui: UiUserDep, runtime: RuntimeDep, data: Annotated[EditForm, Form]
    ) -> Response:
        """Change the summary and/or content, as ``PATCH /api/memories/{id}`` does (re-embedded,
        served copies of the old text withdrawn); then back to the memory."""
        mid = ui_id("memory", memory_id)
        async with runtime.read_session() as session:
            current = await memory_svc.get_memory(session, ui.caller.org_id, mid)
        changes = _changed_texts(current, data)
        if changes:
            await edit_memory_of(runtime, ui.caller.org_id, mid, changes)
        return see_other(f"/ui/memories/{mid}?edited={int(bool(changes))}")
