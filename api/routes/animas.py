"""``/api/animas``."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, delete, get, patch, post
from litestar.params import FromPath, JSONBody, QueryParameter
from litestar.status_codes import HTTP_204_NO_CONTENT

from api.deps import CallerDep, Cursor, Limit, RuntimeDep, parse_uuid
from api.guards import check_json
from elephantasm.schemas.animas import AnimaCreate, AnimaRead, AnimaUpdate
from elephantasm.schemas.common import Page
from elephantasm.services import animas as svc
from elephantasm.services.forget import drop_cached
from elephantasm.services.kv import rows as kv_rows
from elephantasm.services.purge import purge_anima


class AnimaController(Controller):
    """Create, list, read, update and delete animas of the caller's org."""

    path = "/api/animas"
    tags = ["animas"]

    @post("/")
    async def create(self, data: JSONBody[AnimaCreate], caller: CallerDep, runtime: RuntimeDep) -> AnimaRead:
        """Create an anima."""
        check_json(data, runtime)
        async with runtime.unit_of_work() as session:
            anima = await svc.create_anima(session, caller.org_id, data)
        return AnimaRead.model_validate(anima)

    @get("/")
    async def list(
        self, caller: CallerDep, runtime: RuntimeDep, limit: Limit = 50, cursor: Cursor = None
    ) -> Page[AnimaRead]:
        """List animas, oldest first."""
        async with runtime.read_session() as session:
            rows, next_cursor = await svc.list_animas(session, caller.org_id, limit, cursor)
        return Page[AnimaRead](items=[AnimaRead.model_validate(a) for a in rows], next_cursor=next_cursor)

    @get("/{anima_id:str}")
    async def get(self, anima_id: FromPath[str], caller: CallerDep, runtime: RuntimeDep) -> AnimaRead:
        """Read one anima."""
        async with runtime.read_session() as session:
            anima = await svc.get_anima(session, caller.org_id, parse_uuid("anima_id", anima_id))
        return AnimaRead.model_validate(anima)

    @patch("/{anima_id:str}")
    async def update(
        self, anima_id: FromPath[str], data: JSONBody[AnimaUpdate], caller: CallerDep, runtime: RuntimeDep
    ) -> AnimaRead:
        """Change name, description, meta or user_id."""
        check_json(data, runtime)
        async with runtime.unit_of_work() as session:
            anima = await svc.update_anima(session, caller.org_id, parse_uuid("anima_id", anima_id), data)
        return AnimaRead.model_validate(anima)

    @delete("/{anima_id:str}", status_code=HTTP_204_NO_CONTENT)
    async def remove(
        self,
        anima_id: FromPath[str],
        caller: CallerDep,
        runtime: RuntimeDep,
        purge: Annotated[
            bool,
            QueryParameter(
                description="Erase every row of the anima for good (also one already deleted) instead of hiding it."
            ),
        ] = False,
    ) -> None:
        """Delete an anima: it disappears from every route (soft; its data stays for recovery), or with
        ``purge=true`` every row and snapshot of it is erased."""
        aid = parse_uuid("anima_id", anima_id)
        if purge:
            background = runtime.background  # may wait for a dream step
            async with background.unit_of_work() as session:
                await purge_anima(session, caller.org_id, aid, runtime.anima_purge_hooks)
            drop_cached(runtime.pack_state, [aid])
            return
        async with runtime.unit_of_work() as session:
            await svc.delete_anima(session, caller.org_id, aid, runtime.clock())
            # Model-level memory goes with the anima: its KV snapshot rows and files.
            await kv_rows.purge_anima(session, runtime.local.store, caller.org_id, aid)
