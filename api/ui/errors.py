"""Errors on inspector pages become HTML pages with the right status (the API keeps its JSON)."""

from __future__ import annotations

import logging
from urllib.parse import urlencode

from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.response import Redirect

from api.ui.deps import ForbiddenRequest, SignInRequired
from api.ui.render import SECURITY_HEADERS, page
from elephantasm.domain.errors import DomainError

log = logging.getLogger(__name__)

_TITLES = {
    403: "Not allowed",
    404: "Not found",
    409: "Conflict",
    413: "Too large",
    422: "Invalid input",
    429: "Too many attempts",
}


def _error(status: int, detail: str, headers: dict[str, str] | None = None) -> Response[str]:
    return page(
        "error.html",
        http_status=status,
        headers=headers,
        title=_TITLES.get(status, "Error"),
        detail=detail,
        status_code=status,
    )


def sign_in_redirect(request: Request, _: SignInRequired) -> Response:
    """Back to the sign-in form, remembering the page (GET only) to return to."""
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    query = urlencode({"next": target}) if request.method == "GET" else ""
    return Redirect(f"/ui/login{'?' + query if query else ''}", status_code=303, headers=SECURITY_HEADERS)


def on_forbidden(_: Request, exc: ForbiddenRequest) -> Response[str]:
    """A failed CSRF / same-origin check."""
    return _error(403, str(exc))


def on_domain_error(request: Request, exc: DomainError) -> Response:
    """404 for another org's or a missing id, 422 for bad input, 429 with ``Retry-After``, and so on,
    as on the API."""
    if exc.status_hint == 401:
        return sign_in_redirect(request, SignInRequired())
    retry_after = getattr(exc, "retry_after", None)
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
    return _error(exc.status_hint, str(exc.detail), headers)


def on_http_error(_: Request, exc: HTTPException) -> Response[str]:
    """Framework errors (a bad query parameter, a body too large) keep their status."""
    return _error(exc.status_code, str(exc.detail))


def on_validation_error(_: Request, exc: ValidationException) -> Response[str]:
    """A query parameter out of range or of the wrong type: 422 naming it."""
    extra = exc.extra if isinstance(exc.extra, list) else []
    named = [f"{e.get('key')}: {e.get('message')}" for e in extra if isinstance(e, dict) and e.get("key")]
    return _error(422, "; ".join(named) or str(exc.detail))


def on_unexpected(request: Request, exc: Exception) -> Response[str]:
    """A 500 page; the traceback goes to the log only."""
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return _error(500, "internal server error")


UI_EXCEPTION_HANDLERS = {
    SignInRequired: sign_in_redirect,
    ForbiddenRequest: on_forbidden,
    DomainError: on_domain_error,
    ValidationException: on_validation_error,
    HTTPException: on_http_error,
    Exception: on_unexpected,
}
