"""Inspector pages: an anima's dream runs, and one run with its journal."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, Response, get, post
from litestar.params import FromPath, QueryParameter

from api.deps import Cursor, RuntimeDep
from api.ui.deps import UiUserDep, choice, ui_id
from api.ui.forms import see_other
from api.ui.render import PAGE_SIZE, page
from elephantasm.db.models import DREAM_STATUSES
from elephantasm.schemas.dreams import DreamRunRead
from elephantasm.services import animas as anima_svc
from elephantasm.services.dreams import queries as dream_svc
from elephantasm.services.dreams import start_dream_in_background

JOURNAL_LIMIT = 200
# A running run's page reloads itself this often (seconds) until the run ends.
REFRESH_SECONDS = 2


class DreamPages(Controller):
    """``/ui/animas/{id}/dreams`` and ``/ui/dreams/{id}``."""

    path = "/"

    @get("/animas/{anima_id:str}/dreams")
    async def runs(
        self,
        anima_id: FromPath[str],
        ui: UiUserDep,
        runtime: RuntimeDep,
        status: Annotated[str | None, QueryParameter(max_length=16)] = None,
        cursor: Cursor = None,
    ) -> Response:
        """Runs, newest first, 50 a page, optionally of one status."""
        aid = ui_id("anima", anima_id)
        status = choice("status", status, DREAM_STATUSES)
        async with runtime.read_session() as session:
            anima = await anima_svc.get_anima(session, ui.caller.org_id, aid)
            rows, next_cursor = await dream_svc.list_runs(session, ui.caller.org_id, aid, status, PAGE_SIZE, cursor)
        return page(
            "dreams.html",
            ui=ui,
            anima=anima,
            runs=[DreamRunRead.of(r) for r in rows],
            status=status or "",
            statuses=DREAM_STATUSES,
            next_cursor=next_cursor,
            cursor=cursor,
            tab="dreams",
        )

    @get("/dreams/{run_id:str}")
    async def run(self, run_id: FromPath[str], ui: UiUserDep, runtime: RuntimeDep) -> Response:
        """One run: what it read and wrote, and its journal (created, merged, superseded, archived).
        While the run is running the page reloads itself, so a triggered run can be watched to its end."""
        rid = ui_id("dream run", run_id)
        async with runtime.read_session() as session:
            row = await dream_svc.get_run(session, ui.caller.org_id, rid)
            anima = await anima_svc.get_anima(session, ui.caller.org_id, row.anima_id)
            actions, total = await dream_svc.run_actions(session, ui.caller.org_id, rid, JOURNAL_LIMIT)
        return page(
            "dream.html",
            ui=ui,
            anima=anima,
            run=DreamRunRead.of(row),
            actions=actions,
            total=total,
            refresh=REFRESH_SECONDS,
            tab="dreams",
        )

    @post("/animas/{anima_id:str}/dreams/trigger")
    async def trigger(self, anima_id: FromPath[str], ui: UiUserDep, runtime: RuntimeDep) -> Response:
        """Start a run now, as ``POST /api/dreams/trigger`` does (409 if one is running); then watch it."""
        run = await start_dream_in_background(runtime.dreams, ui.caller.org_id, ui_id("anima", anima_id))
        return see_other(f"/ui/dreams/{run.id}")
