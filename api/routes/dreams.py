"""``/api/dreams``: trigger a run by hand, and read the dream journal."""

from __future__ import annotations

import uuid
from typing import Annotated

from litestar import Controller, Response, get, post
from litestar.params import FromPath, FromQuery, JSONBody, QueryParameter
from litestar.status_codes import HTTP_202_ACCEPTED

from api.deps import CallerDep, Cursor, Limit, RuntimeDep, one_of_param, parse_enum, parse_uuid
from elephantasm.domain.enums import DreamStatus
from elephantasm.schemas.common import Page
from elephantasm.schemas.dreams import DreamActionRead, DreamRunDetail, DreamRunRead, DreamTrigger
from elephantasm.services.dreams import queries as svc
from elephantasm.services.dreams import start_dream_in_background


class DreamController(Controller):
    """Dream runs ("sessions"): start one now, list them, read one with its journal."""

    path = "/api/dreams"
    tags = ["dreams"]

    @post("/trigger", status_code=HTTP_202_ACCEPTED)
    async def trigger(
        self, data: JSONBody[DreamTrigger], caller: CallerDep, runtime: RuntimeDep
    ) -> Response[DreamRunRead]:
        """Start a run for the anima now: 202 with the running run; 409 if one is already running.

        The run proceeds in the background; poll ``GET /api/dreams/sessions/{id}`` for its end.
        """
        run = await start_dream_in_background(runtime.dreams, caller.org_id, data.anima_id)
        return Response(DreamRunRead.of(run), status_code=HTTP_202_ACCEPTED)

    @get("/sessions")
    async def list_sessions(
        self,
        caller: CallerDep,
        runtime: RuntimeDep,
        anima_id: FromQuery[uuid.UUID | None] = None,
        status: one_of_param(DreamStatus) = None,  # type: ignore[valid-type]
        limit: Limit = 100,
        cursor: Cursor = None,
    ) -> Page[DreamRunRead]:
        """Runs, newest first, optionally of one anima and one status (running|completed|failed)."""
        wanted = parse_enum(DreamStatus, "status", status)
        async with runtime.read_session() as session:
            rows, next_cursor = await svc.list_runs(session, caller.org_id, anima_id, wanted, limit, cursor)
        return Page[DreamRunRead](items=[DreamRunRead.of(r) for r in rows], next_cursor=next_cursor)

    @get("/sessions/{run_id:str}")
    async def get_session(
        self,
        run_id: FromPath[str],
        caller: CallerDep,
        runtime: RuntimeDep,
        actions_limit: Annotated[int, QueryParameter(ge=0, le=10_000, description="Journal entries to include.")] = 500,
    ) -> DreamRunDetail:
        """One run with its journal: what it created, merged, superseded and archived (before/after)."""
        async with runtime.read_session() as session:
            run = await svc.get_run(session, caller.org_id, parse_uuid("run_id", run_id))
            actions, total = await svc.run_actions(session, caller.org_id, run.id, actions_limit)
        journal = [DreamActionRead.model_validate(a) for a in actions]
        return DreamRunDetail.of(run).model_copy(update={"actions": journal, "action_count": total})
