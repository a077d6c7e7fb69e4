"""``/api/identities/anima/{id}``: an anima's identity, its version history, and restoring a version."""

from __future__ import annotations

from litestar import Controller, get, post
from litestar.params import FromPath, JSONBody
from litestar.status_codes import HTTP_200_OK

from api.deps import CallerDep, RuntimeDep, parse_uuid
from elephantasm.schemas.identity import IdentityRead, IdentityRestore, IdentityVersionRead
from elephantasm.services.dreams import identity as svc


class IdentityController(Controller):
    """Identity as the dreamer evolves it; every change is a version with its reason."""

    path = "/api/identities/anima"
    tags = ["identity"]

    @get("/{anima_id:str}")
    async def get_identity(self, anima_id: FromPath[str], caller: CallerDep, runtime: RuntimeDep) -> IdentityRead:
        """The current identity (404 until the dreamer has written a first version)."""
        async with runtime.read_session() as session:
            return IdentityRead.of(await svc.get_identity(session, caller.org_id, parse_uuid("anima_id", anima_id)))

    @get("/{anima_id:str}/history")
    async def history(
        self, anima_id: FromPath[str], caller: CallerDep, runtime: RuntimeDep
    ) -> list[IdentityVersionRead]:
        """Every version, newest first, with the reason for each change."""
        async with runtime.read_session() as session:
            rows = await svc.identity_history(session, caller.org_id, parse_uuid("anima_id", anima_id))
        return [IdentityVersionRead.of(r) for r in rows]

    @post("/{anima_id:str}/restore", status_code=HTTP_200_OK)
    async def restore(
        self, anima_id: FromPath[str], data: JSONBody[IdentityRestore], caller: CallerDep, runtime: RuntimeDep
    ) -> IdentityRead:
        """Make an earlier version current again; recorded as a new version ("restored version N")."""
        aid = parse_uuid("anima_id", anima_id)
        async with runtime.unit_of_work() as session:
            identity = await svc.restore_identity(session, caller.org_id, aid, data.version, runtime.clock())
        return IdentityRead.of(identity)
