"""Inspector action: forget a memory or a knowledge item, exactly as the API's DELETE does."""

from __future__ import annotations

from litestar import Controller, Request, Response, post
from litestar.params import FromPath

from api.deps import RuntimeDep
from api.edits import forget_item
from api.ui.deps import UiUserDep, ui_id
from api.ui.forms import see_other

# The page path of each kind (``/ui/memories/{id}``, ``/ui/knowledge/{id}``) → the service's kind.
KINDS = {"memories": "memory", "knowledge": "knowledge"}


class ForgetActions(Controller):
    """``POST /ui/memories/{id}/forget`` and ``POST /ui/knowledge/{id}/forget``."""

    path = "/"

    @post([f"/{kind}/{{item_id:str}}/forget" for kind in KINDS])
    async def forget_item(
        self, request: Request, item_id: FromPath[str], ui: UiUserDep, runtime: RuntimeDep
    ) -> Response:
        """Forget it (``services/forget.py``: it leaves every list, search, pack and served-pack
        history, its text is scrubbed), then back to the anima's list of that kind with a notice."""
        kind = request.url.path.split("/")[2]  # /ui/<kind>/<id>/forget
        iid = ui_id(KINDS[kind], item_id)
        done = await forget_item(runtime, ui.caller.org_id, KINDS[kind], iid)
        return see_other(f"/ui/animas/{done.anima_id}/{kind}?forgotten={iid}")
