"""Inspector pages: identity versions, the difference between two, and restoring one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from litestar import Controller, Response, get, post
from litestar.params import FromPath, QueryParameter

from api.deps import RuntimeDep
from api.ui.deps import UiUserDep, ui_id
from api.ui.diff import diff_versions
from api.ui.forms import Form, see_other
from api.ui.render import page
from elephantasm.domain.errors import NotFoundError
from elephantasm.services import animas as anima_svc
from elephantasm.services.dreams import identity as identity_svc


@dataclass
class RestoreForm:
    """The restore button's form."""

    version: int = 0


def _pick(history: list, number: int | None, default: int) -> object | None:  # type: ignore[type-arg]
    """The version numbered ``number`` (404 if absent), else the one at position ``default``."""
    if number is None:
        return history[default] if len(history) > abs(default) else None
    for version in history:
        if version.version == number:
            return version
    raise NotFoundError(f"identity version {number} not found")


class IdentityPages(Controller):
    """``/ui/animas/{id}/identity``."""

    path = "/animas/{anima_id:str}/identity"

    @get("/")
    async def versions(
        self,
        anima_id: FromPath[str],
        ui: UiUserDep,
        runtime: RuntimeDep,
        a: Annotated[int | None, QueryParameter(ge=1, description="Older version to compare.")] = None,
        b: Annotated[int | None, QueryParameter(ge=1, description="Newer version to compare.")] = None,
        restored: Annotated[int | None, QueryParameter(ge=1)] = None,
    ) -> Response:
        """Every version (newest first) and a word diff of two of them (default: the last change)."""
        aid = ui_id("anima", anima_id)
        async with runtime.read_session() as session:
            anima = await anima_svc.get_anima(session, ui.caller.org_id, aid)
            history = await identity_svc.identity_history(session, ui.caller.org_id, aid)
        new, old = _pick(history, b, 0), _pick(history, a, 1)
        diff = diff_versions(old, new) if old is not None and new is not None else []
        return page(
            "identity.html",
            ui=ui,
            anima=anima,
            history=history,
            old=old,
            new=new,
            diff=diff,
            restored=restored,
            tab="identity",
        )

    @post("/restore")
    async def restore(
        self, anima_id: FromPath[str], ui: UiUserDep, runtime: RuntimeDep, data: Annotated[RestoreForm, Form]
    ) -> Response:
        """Make a version current again (recorded as a new version), then back to the list."""
        aid = ui_id("anima", anima_id)
        async with runtime.unit_of_work() as session:
            await identity_svc.restore_identity(session, ui.caller.org_id, aid, data.version, runtime.clock())
        return see_other(f"/ui/animas/{aid}/identity?restored={data.version}")
