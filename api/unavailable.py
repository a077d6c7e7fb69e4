"""Postgres unreachable → 503 with ``Retry-After`` (a client's retry can succeed), never a 500; so is
the server's own storage failing (said as such, and logged). Which errors mean "unreachable" is
decided in ``elephantasm/db/errors.py``."""

from __future__ import annotations

import logging

from litestar import Request, Response
from litestar.types import ExceptionHandlersMap

from api.errors import error_response, on_unexpected_error
from elephantasm.db.errors import DATABASE_ERRORS, is_unavailable
from elephantasm.logsafe import safe_traceback

log = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5
DETAIL = "the database is unavailable; retry shortly"
STORAGE_DETAIL = "the server's storage is unavailable; retry shortly"


def unavailable_response(detail: str = DETAIL) -> Response:
    """The 503 every route (and the health check) answers while Postgres is unreachable."""
    return error_response(503, detail, {"Retry-After": str(RETRY_AFTER_SECONDS)})


def on_database_error(request: Request, exc: Exception) -> Response:
    """503 when the database cannot be reached; any other driver error stays a logged 500."""
    if is_unavailable(exc):
        return unavailable_response()
    return on_unexpected_error(request, exc)


def on_os_error(request: Request, exc: Exception) -> Response:
    """The driver's I/O errors are the database being unreachable; any other I/O error (a full disk,
    an unmounted snapshot volume) is the server's own storage failing: also temporary for the
    client (503, said as such), and logged with its traceback for the operator."""
    if is_unavailable(exc):
        return unavailable_response()
    log.error("storage error on %s %s\n%s", request.method, request.url.path, safe_traceback(exc))
    return unavailable_response(STORAGE_DETAIL)


UNAVAILABLE_HANDLERS: ExceptionHandlersMap = {OSError: on_os_error, **dict.fromkeys(DATABASE_ERRORS, on_database_error)}
"""Merged into the app's exception handlers (the most specific class wins)."""
