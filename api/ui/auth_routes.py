"""Sign in with an API key, sign out. The key is checked once and never stored or sent back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from litestar import Controller, Request, Response, get, post
from litestar.params import QueryParameter

from api.auth import failures_counted, verify_api_key
from api.deps import RuntimeDep
from api.scopes import READ_ONLY
from api.ui import session as ui_session
from api.ui.deps import UiUserDep, cookie, safe_next, same_origin
from api.ui.forms import Form, see_other
from api.ui.render import page
from elephantasm.domain.errors import AuthenticationError, ForbiddenError
from elephantasm.runtime import Runtime

LOGIN_COOKIE_SECONDS = 3600


@dataclass
class SignInForm:
    """The sign-in form."""

    api_key: str = ""
    token: str = ""
    next: str = ""


def _form(request: Request, runtime: Runtime, target: str, error: str | None = None, status: int = 200) -> Response:
    nonce = ui_session.new_login_nonce()
    return page(
        "login.html",
        http_status=status,
        next=target,
        error=error,
        token=ui_session.login_token(runtime.secret, nonce),
        cookies=[cookie(request, runtime, ui_session.LOGIN_COOKIE, nonce, LOGIN_COOKIE_SECONDS)],
    )


class AuthController(Controller):
    """``/ui/login`` and ``/ui/logout``."""

    path = "/"

    @get("/login")
    async def login_form(
        self,
        request: Request,
        runtime: RuntimeDep,
        target: Annotated[str | None, QueryParameter(name="next")] = None,
    ) -> Response:
        """The sign-in form (with a fresh pre-sign-in cookie its hidden token is bound to)."""
        return _form(request, runtime, safe_next(target))

    @post("/login")
    async def login(self, request: Request, runtime: RuntimeDep, data: Annotated[SignInForm, Form]) -> Response:
        """Check the key; on success set the session cookie and go on, else show the form again (401).
        Failures count in the API's failed-auth limit: over it, 429 even for a good key."""
        nonce = request.cookies.get(ui_session.LOGIN_COOKIE)
        if not same_origin(request) or not ui_session.login_ok(runtime.secret, nonce, data.token):
            raise ForbiddenError("the sign-in form expired or came from another site; reload it and try again")
        try:
            async with failures_counted(request, request.app.state):
                caller = await verify_api_key(runtime, data.api_key.strip())
        except AuthenticationError:
            return _form(request, runtime, safe_next(data.next), "invalid, revoked or expired API key", 401)
        now = runtime.clock()
        lifetime = runtime.settings.ui_session_hours * 3600
        if caller.expires_at is not None:  # a session never outlives its key
            lifetime = min(lifetime, (caller.expires_at - now).total_seconds())
        value = ui_session.issue_session(runtime.secret, caller.key_id, now.timestamp(), lifetime)
        response = see_other(safe_next(data.next))
        response.set_cookie(cookie(request, runtime, ui_session.SESSION_COOKIE, value, int(lifetime)))
        response.delete_cookie(ui_session.LOGIN_COOKIE, path=ui_session.COOKIE_PATH)
        return response

    @post("/logout", opt=READ_ONLY)
    async def logout(self, ui: UiUserDep) -> Response:
        """End the session (``ui`` checks the form's CSRF token): the cookie is cleared and the
        browser goes back to the sign-in form."""
        response = see_other("/ui/login")
        response.delete_cookie(ui_session.SESSION_COOKIE, path=ui_session.COOKIE_PATH)
        return response
