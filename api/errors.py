"""The one place where errors become HTTP responses. Every error body is JSON with ``detail``.

Postgres unreachable is a 503 with ``Retry-After`` (a client's retry can succeed), never a 500; so
is the server's own storage failing (said as such, and logged). Which database errors mean
"unreachable" is decided in ``elephantasm/db/errors.py``."""

from __future__ import annotations

import json
import logging
from typing import Any

from litestar import MediaType, Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.response.base import ASGIResponse
from litestar.status_codes import HTTP_413_REQUEST_ENTITY_TOO_LARGE, HTTP_422_UNPROCESSABLE_ENTITY
from litestar.types import ExceptionHandlersMap

from elephantasm.db.errors import DATABASE_ERRORS, is_disk_full, is_unavailable
from elephantasm.domain.errors import STORAGE_FULL_ERRNOS, DomainError
from elephantasm.logsafe import safe_traceback

log = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5
DETAIL = "the database is unavailable; retry shortly"
STORAGE_DETAIL = "the server's storage is unavailable; retry shortly"
FULL_DETAIL = "{what} storage is full: nothing was written; retry once space is freed"


def _json(status: int, detail: Any, headers: dict[str, str] | None = None) -> Response:
    return Response({"detail": detail}, status_code=status, media_type=MediaType.JSON, headers=headers)


def asgi_error(status: int, detail: str, headers: dict[str, str] | None = None) -> ASGIResponse:
    """The same JSON error as an ASGI app, for raw ASGI code answering before (or outside) the router."""
    body = json.dumps({"detail": detail})
    return ASGIResponse(body=body, status_code=status, media_type=MediaType.JSON, headers=headers)


def _loc_part(part: str) -> int | str:
    # isdecimal + isascii: "²" or "٣" are digits to str.isdigit() but not to int().
    return int(part) if part.isascii() and part.isdecimal() else part


def _field_errors(extra: Any) -> list[dict[str, Any]]:
    """Litestar's validation extras → ``[{"loc": [...], "msg": "..."}]`` naming each field."""
    errors = []
    for item in extra if isinstance(extra, list) else []:
        if not isinstance(item, dict):
            continue
        key = item.get("key")
        loc: list[Any] = [item.get("source") or "body"]
        if key:
            loc.extend(_loc_part(p) for p in str(key).split("."))
        errors.append({"loc": loc, "msg": item.get("message", "invalid value")})
    return errors


def on_domain_error(_: Request, exc: DomainError) -> Response:
    """Core errors carry their own status hint (404, 409, 413, 422, 401, 429)."""
    headers = {"WWW-Authenticate": "Bearer"} if exc.status_hint == 401 else {}
    retry_after = getattr(exc, "retry_after", None)
    if retry_after is not None:
        headers["Retry-After"] = str(retry_after)
    return _json(exc.status_hint, exc.detail, headers or None)


def on_validation_error(_: Request, exc: ValidationException) -> Response:
    """Schema violations are 422 with a list of field errors (malformed JSON is a 422 too)."""
    errors = _field_errors(exc.extra)
    if errors:
        return _json(HTTP_422_UNPROCESSABLE_ENTITY, errors)
    return _json(HTTP_422_UNPROCESSABLE_ENTITY, str(exc.detail))


def on_http_error(_: Request, exc: HTTPException) -> Response:
    """Framework errors (404 route, 405, 413 body limit…) keep their status with a ``detail``."""
    detail = exc.detail
    if exc.status_code == HTTP_413_REQUEST_ENTITY_TOO_LARGE:
        detail = "request body exceeds the server's limit (max_request_bytes)"
    elif exc.status_code == 400:
        # The only plain 400 Litestar raises for us is a body it could not decode.
        return _json(HTTP_422_UNPROCESSABLE_ENTITY, f"malformed JSON body: {detail}")
    return _json(exc.status_code, detail, exc.headers)


def on_unexpected_error(request: Request, exc: Exception) -> Response:
    """Anything else is a 500 with a generic detail; the traceback goes to the log, not the client,
    and without the exception's message (it may quote the request's content)."""
    log.error("unhandled error on %s %s\n%s", request.method, request.url.path, safe_traceback(exc))
    return _json(500, "internal server error")


def unavailable_response(detail: str = DETAIL) -> Response:
    """The 503 every route (and the health check) answers while Postgres is unreachable."""
    return _json(503, detail, {"Retry-After": str(RETRY_AFTER_SECONDS)})


def on_database_error(request: Request, exc: Exception) -> Response:
    """507 when the database's disk is full, 503 when it cannot be reached; any other driver error
    stays a logged 500."""
    if is_disk_full(exc):
        log.error("database disk full on %s %s", request.method, request.url.path)
        return _json(507, FULL_DETAIL.format(what="the database's"))
    if is_unavailable(exc):
        return unavailable_response()
    return on_unexpected_error(request, exc)


def on_os_error(request: Request, exc: Exception) -> Response:
    """The driver's I/O errors are the database being unreachable; any other I/O error is the
    server's own storage failing, logged with its traceback for the operator: a full disk is a 507,
    anything else (an unmounted snapshot volume) a 503, each said as such."""
    if is_unavailable(exc):
        return unavailable_response()
    log.error("storage error on %s %s\n%s", request.method, request.url.path, safe_traceback(exc))
    if isinstance(exc, OSError) and exc.errno in STORAGE_FULL_ERRNOS:
        return _json(507, FULL_DETAIL.format(what="the server's"))
    return unavailable_response(STORAGE_DETAIL)


EXCEPTION_HANDLERS: ExceptionHandlersMap = {
    OSError: on_os_error,
    **dict.fromkeys(DATABASE_ERRORS, on_database_error),
    DomainError: on_domain_error,
    ValidationException: on_validation_error,
    HTTPException: on_http_error,
    Exception: on_unexpected_error,
}


def error_response(request: Request, exc: Exception) -> Response:
    """The API's answer to ``exc``: the handler of its nearest class in :data:`EXCEPTION_HANDLERS`."""
    handler = next(EXCEPTION_HANDLERS[cls] for cls in type(exc).__mro__ if cls in EXCEPTION_HANDLERS)
    response: Response = handler(request, exc)  # type: ignore[arg-type]
    return response
