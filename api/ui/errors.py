"""Errors on inspector pages: the API's answer (``api/errors.py``: status, ``detail``, ``Retry-After``)
rendered as an HTML page; a missing or ended session (401) goes back to the sign-in form."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from litestar import Request, Response
from litestar.response import Redirect

from api.errors import EXCEPTION_HANDLERS, error_response
from api.ui.render import SECURITY_HEADERS, page

_TITLES = {
    403: "Not allowed",
    404: "Not found",
    409: "Conflict",
    413: "Too large",
    422: "Invalid input",
    429: "Too many attempts",
}


def sign_in_redirect(request: Request) -> Response:
    """Back to the sign-in form, remembering the page (GET only) to return to."""
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    query = urlencode({"next": target}) if request.method == "GET" else ""
    return Redirect(f"/ui/login{'?' + query if query else ''}", status_code=303, headers=SECURITY_HEADERS)


def _text(detail: Any) -> str:
    """A ``detail`` as one line: a list of field errors as ``field: message; …``."""
    if not isinstance(detail, list):
        return str(detail)
    return "; ".join(f"{'.'.join(str(p) for p in e['loc'][1:]) or e['loc'][0]}: {e['msg']}" for e in detail)


def error_page(request: Request, exc: Exception) -> Response:
    """The page for ``exc``: what the API would answer, as HTML."""
    answer = error_response(request, exc)
    status = answer.status_code or 500
    if status == 401:
        return sign_in_redirect(request)
    retry_after = answer.headers.get("Retry-After")
    return page(
        "error.html",
        http_status=status,
        headers={"Retry-After": retry_after} if retry_after else None,
        title=_TITLES.get(status, "Error"),
        detail=_text(answer.content["detail"]),
        status_code=status,
    )


# Every class the API maps, so no app-level JSON handler is nearer to an exception than these.
UI_EXCEPTION_HANDLERS = dict.fromkeys(EXCEPTION_HANDLERS, error_page)
