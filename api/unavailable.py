"""Postgres unreachable → 503 with ``Retry-After`` (a client's retry can succeed), never a 500."""

from __future__ import annotations

import asyncpg
from litestar import Request, Response
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

from api.errors import error_response, on_unexpected_error

RETRY_AFTER_SECONDS = 5
DETAIL = "the database is unavailable; retry shortly"


def is_unavailable(exc: BaseException) -> bool:
    """Whether ``exc`` means "cannot reach the database" rather than "this request is wrong"."""
    if isinstance(exc, PoolTimeoutError | OSError | asyncpg.PostgresConnectionError | asyncpg.InterfaceError):
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
