"""The one place where errors become HTTP responses. Every error body is JSON with ``detail``."""

from __future__ import annotations

import logging
from typing import Any

from litestar import MediaType, Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.status_codes import HTTP_413_REQUEST_ENTITY_TOO_LARGE, HTTP_422_UNPROCESSABLE_ENTITY
from litestar.types import ExceptionHandlersMap

from elephantasm.domain.errors import DomainError
from elephantasm.logsafe import safe_traceback

log = logging.getLogger(__name__)


def _json(status: int, detail: Any, headers: dict[str, str] | None = None) -> Response:
    return Response({"detail": detail}, status_code=status, media_type=MediaType.JSON, headers=headers)


error_response = _json
"""The one error body shape (JSON with ``detail``), for the other api modules."""


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


EXCEPTION_HANDLERS: ExceptionHandlersMap = {
    DomainError: on_domain_error,
    ValidationException: on_validation_error,
    HTTPException: on_http_error,
    Exception: on_unexpected_error,
}
