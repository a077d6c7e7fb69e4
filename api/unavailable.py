"""Postgres unreachable → 503 with ``Retry-After`` (a client's retry can succeed), never a 500; so is
the server's own storage failing (said as such, and logged). A full disk, the database's or the
server's own, is a 507 saying so."""

from __future__ import annotations

import logging
from types import TracebackType

import asyncpg
from litestar import Request, Response
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

from api.errors import error_response, on_unexpected_error
from elephantasm.domain.errors import STORAGE_FULL_ERRNOS
from elephantasm.logsafe import safe_traceback

log = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5
DETAIL = "the database is unavailable; retry shortly"
STORAGE_DETAIL = "the server's storage is unavailable; retry shortly"
FULL_DETAIL = "{what} storage is full: nothing was written; retry once space is freed"
_DISK_FULL_STATE = "53100"
# SQLSTATEs a retry can get past: a statement cancelled by statement_timeout (a stuck or overloaded
# database), a deadlock or serialization failure (the other transaction won), too many connections,
# and the server shutting down or starting up.
_RETRYABLE_STATES = frozenset({"57014", "40P01", "40001", "53300", "57P01", "57P02", "57P03"})
# Modules whose OSErrors mean "the database cannot be reached" (a refused TCP connection, a missing
# Unix socket of a stopped embedded server, a reset mid-query).
_DRIVER_MODULES = ("asyncpg", "sqlalchemy")


def _raised_by_driver(tb: TracebackType | None) -> bool:
    while tb is not None:
        if str(tb.tb_frame.f_globals.get("__name__", "")).startswith(_DRIVER_MODULES):
            return True
        tb = tb.tb_next
    return False


def is_unavailable(exc: BaseException) -> bool:
    """Whether ``exc`` means "cannot reach the database" rather than "this request is wrong".

    An ``OSError`` counts only when the driver raised it: a full disk or an unmounted volume elsewhere
    (the KV snapshot store, say) is not a database outage (see :func:`on_os_error`).
    """
    if isinstance(exc, OSError):
        return _raised_by_driver(exc.__traceback__)
    if isinstance(exc, PoolTimeoutError | asyncpg.PostgresConnectionError | asyncpg.InterfaceError):
        return True
    if isinstance(exc, asyncpg.exceptions.CannotConnectNowError | asyncpg.exceptions.AdminShutdownError):
        return True
    if getattr(exc, "sqlstate", None) in _RETRYABLE_STATES:
        return True
    if isinstance(exc, DBAPIError):
        return (
            bool(exc.connection_invalidated)
            or getattr(exc.orig, "sqlstate", None) in _RETRYABLE_STATES
            or isinstance(exc, OperationalError | InterfaceError)
            or (exc.orig is not None and is_unavailable(exc.orig.__cause__ or exc.orig))
        )
    return False


def unavailable_response(detail: str = DETAIL) -> Response:
    """The 503 every route (and the health check) answers while Postgres is unreachable."""
    return error_response(503, detail, {"Retry-After": str(RETRY_AFTER_SECONDS)})


def on_database_error(request: Request, exc: Exception) -> Response:
    """507 when the database's disk is full, 503 when it cannot be reached; any other driver error
    stays a logged 500."""
    if _DISK_FULL_STATE in (getattr(exc, "sqlstate", None), getattr(getattr(exc, "orig", None), "sqlstate", None)):
        log.error("database disk full on %s %s", request.method, request.url.path)
        return error_response(507, FULL_DETAIL.format(what="the database's"))
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
        return error_response(507, FULL_DETAIL.format(what="the server's"))
    return unavailable_response(STORAGE_DETAIL)


UNAVAILABLE_HANDLERS = {
    DBAPIError: on_database_error,
    OSError: on_os_error,
    PoolTimeoutError: on_database_error,
    asyncpg.PostgresConnectionError: on_database_error,
    asyncpg.InterfaceError: on_database_error,
    asyncpg.exceptions.CannotConnectNowError: on_database_error,
    asyncpg.exceptions.AdminShutdownError: on_database_error,
    asyncpg.exceptions.DiskFullError: on_database_error,  # raised as is on the driver's own paths (COPY)
}
"""Merged into the app's exception handlers (the most specific class wins)."""
