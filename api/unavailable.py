"""Postgres unreachable → 503 with ``Retry-After`` (a client's retry can succeed), never a 500."""

from __future__ import annotations

from types import TracebackType

import asyncpg
from litestar import Request, Response
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

from api.errors import error_response, on_unexpected_error

RETRY_AFTER_SECONDS = 5
DETAIL = "the database is unavailable; retry shortly"
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

    An ``OSError`` counts only when the driver raised it: a full disk or a missing file elsewhere
    (the KV snapshot store, say) is the server's own failure, a logged 500, not a database outage.
    """
    if isinstance(exc, OSError):
        return _raised_by_driver(exc.__traceback__)
    if isinstance(exc, PoolTimeoutError | asyncpg.PostgresConnectionError | asyncpg.InterfaceError):
        return True
    if isinstance(exc, asyncpg.exceptions.CannotConnectNowError | asyncpg.exceptions.AdminShutdownError):
        return True
    if isinstance(exc, DBAPIError):
        return (
            bool(exc.connection_invalidated)
            or isinstance(exc, OperationalError | InterfaceError)
            or (exc.orig is not None and is_unavailable(exc.orig.__cause__ or exc.orig))
        )
    return False


def unavailable_response() -> Response:
    """The 503 every route (and the health check) answers while Postgres is unreachable."""
    return error_response(503, DETAIL, {"Retry-After": str(RETRY_AFTER_SECONDS)})


def on_database_error(request: Request, exc: Exception) -> Response:
    """503 when the database cannot be reached; any other driver error stays a logged 500."""
    if is_unavailable(exc):
        return unavailable_response()
    return on_unexpected_error(request, exc)


UNAVAILABLE_HANDLERS = {
    DBAPIError: on_database_error,
    OSError: on_database_error,
    PoolTimeoutError: on_database_error,
    asyncpg.PostgresConnectionError: on_database_error,
    asyncpg.InterfaceError: on_database_error,
    asyncpg.exceptions.CannotConnectNowError: on_database_error,
    asyncpg.exceptions.AdminShutdownError: on_database_error,
}
"""Merged into the app's exception handlers (the most specific class wins)."""
