"""``/api/keys``: the caller's org manages its own keys (admin keys only)."""

from __future__ import annotations

from litestar import Controller, delete, get, post
from litestar.datastructures import State
from litestar.params import FromPath, JSONBody
from litestar.status_codes import HTTP_204_NO_CONTENT

from api.deps import CallerDep, RuntimeDep, parse_uuid
from api.scopes import ADMIN_ONLY
from elephantasm.schemas.common import Page
from elephantasm.schemas.keys import ApiKeyCreate, ApiKeyCreated, ApiKeyRead
from elephantasm.services import keys as svc


class KeyController(Controller):
    """List, create and revoke API keys of the caller's org."""

    path = "/api/keys"
    tags = ["keys"]
    opt = ADMIN_ONLY

    @get("/")
    async def list(self, caller: CallerDep, runtime: RuntimeDep) -> Page[ApiKeyRead]:
        """Every key of the org (prefixes only), oldest first."""
        async with runtime.read_session() as session:
            rows = await svc.list_org_keys(session, caller.org_id)
        return Page[ApiKeyRead](items=[ApiKeyRead.model_validate(k) for k in rows])

    @post("/")
    async def create(self, data: JSONBody[ApiKeyCreate], caller: CallerDep, runtime: RuntimeDep) -> ApiKeyCreated:
        """Issue a new key, no more powerful (``scope``) and no longer-lived (``expires_at``) than the
        calling key; omitted, both default to the caller's. The response is the only time its secret is shown."""
        async with runtime.unit_of_work() as session:
            key, row = await svc.mint_key(
                session, runtime.secret, caller, data.name, data.scope, data.expires_at, runtime.clock()
            )
        read = ApiKeyRead.model_validate(row)
        return ApiKeyCreated(**read.model_dump(), key=key)

    @delete("/{key_id:str}", status_code=HTTP_204_NO_CONTENT)
    async def revoke(self, key_id: FromPath[str], caller: CallerDep, runtime: RuntimeDep, state: State) -> None:
        """Revoke a key of the org (another org's key is a 404); this process stops accepting it at
        once, other replicas within ``auth_cache_seconds``."""
        async with runtime.unit_of_work() as session:
            row = await svc.revoke_key(session, str(parse_uuid("key_id", key_id)), caller.org_id)
        state.auth_cache.evict_key(row.id)
