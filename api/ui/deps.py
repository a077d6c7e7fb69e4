"""Who is signed in to the inspector, and the request checks every page and form shares."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from urllib.parse import urlsplit

from litestar import Request
from litestar.datastructures import Cookie, State
from litestar.di import NamedDependency

from api.deps import one_of
from api.forwarded import via_trusted_proxy
from api.scopes import SAFE_METHODS, check_scope
from api.ui import session as ui_session
from elephantasm.domain.errors import AuthenticationError, ForbiddenError, NotFoundError
from elephantasm.domain.keys import KeyScope
from elephantasm.runtime import Runtime
from elephantasm.services.keys import Caller, active_key

SIGN_IN = "sign in to the inspector"


@dataclass(frozen=True, slots=True)
class UiUser:
    """The signed-in org: its caller (the key's org, scope and expiry, as on the API), name, key
    prefix, CSRF token."""

    caller: Caller
    org_name: str
    key_prefix: str
    csrf: str

    @property
    def can_write(self) -> bool:
        """Whether the key may change anything (pages show action buttons only then)."""
        return self.caller.scope.allows(KeyScope.WRITE)


async def provide_ui_user(request: Request, state: State) -> UiUser:
    """The session's org; AuthenticationError (back to sign-in) when the cookie is missing, forged,
    expired, or its key was revoked or expired since sign-in. The key's scope is checked by the API's
    own guard (``api/scopes.py``): a page is a read, a form post needs what its API twin needs (403).
    A form post must also come from this site and carry the session's CSRF token (403)."""
    runtime: Runtime = state.runtime
    now = runtime.clock()
    found = ui_session.read_session(runtime.secret, request.cookies.get(ui_session.SESSION_COOKIE), now.timestamp())
    if found is None:
        raise AuthenticationError(SIGN_IN)
    async with runtime.read_session() as session:
        active = await active_key(session, found.key_id, now)
    if active is None:
        raise AuthenticationError(SIGN_IN)
    caller, org_name, prefix = active
    check_scope(request, caller)
    if request.method not in SAFE_METHODS:
        token = (await request.form()).get("csrf_token")
        token = token if isinstance(token, str) else None  # a file upload is no token
        if not same_origin(request) or not ui_session.csrf_ok(runtime.secret, found.nonce, token):
            raise ForbiddenError("the form is stale or came from another site; reload the page and try again")
    return UiUser(caller, org_name, prefix, ui_session.csrf_token(runtime.secret, found.nonce))


UiUserDep = NamedDependency[UiUser]


def ui_id(kind: str, value: str) -> uuid.UUID:
    """A path id; a malformed one is simply a page that does not exist (404), as in a browser."""
    try:
        return uuid.UUID(value)
    except ValueError:
        raise NotFoundError(f"{kind} {value!r} not found") from None


def choice(name: str, value: str | None, allowed: tuple[str, ...]) -> str | None:
    """A filter's value: None when empty (the form's "any"), else one of ``allowed`` or a 422 naming it."""
    return one_of(name, value or None, allowed)


def same_origin(request: Request) -> bool:
    """False for a browser post from another site.

    ``Sec-Fetch-Site`` (set by the browser, untouched by proxies) decides when present; older
    browsers send only ``Origin``, compared with the Host the request reached, or the
    ``X-Forwarded-Host`` of a configured proxy (``api/forwarded.py``; any client can send one).
    The CSRF token is checked as well either way.
    """
    fetch_site = request.headers.get("sec-fetch-site")
    if fetch_site is not None:
        return fetch_site in ("same-origin", "none")
    origin = request.headers.get("origin")
    if origin is None:
        return True
    forwarded = request.headers.get("x-forwarded-host") if via_trusted_proxy(request) else None
    host = forwarded or request.headers.get("host", "")
    return origin != "null" and urlsplit(origin).netloc == host


def safe_next(target: str | None) -> str:
    """Where to go after sign-in: only a path inside the inspector (no open redirect)."""
    if target and target.startswith("/ui") and not target.startswith("//") and "\\" not in target:
        return target
    return "/ui/animas"


def cookie(request: Request, runtime: Runtime, key: str, value: str, max_age: int) -> Cookie:
    """An inspector cookie: HttpOnly, SameSite=Strict, scoped to /ui, Secure over https."""
    secure = request.url.scheme == "https" or runtime.settings.ui_secure_cookies
    return Cookie(
        key=key,
        value=value,
        max_age=max_age,
        path=ui_session.COOKIE_PATH,
        httponly=True,
        samesite="strict",
        secure=secure,
    )
