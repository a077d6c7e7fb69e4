"""The one place where database errors are classified: domain errors, or "unavailable".

Integrity and data errors become domain errors: a unique or foreign-key violation a 409, a NOT
NULL/CHECK violation or a value the column cannot hold a 422; details name the constraint, never the
values (user content, which reaches clients and logs). :func:`is_unavailable` tells the rest apart:
the database cannot be reached (503, a retry can succeed) or something else went wrong (500). The
API maps :data:`DATABASE_ERRORS` without importing the driver or SQLAlchemy itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType

import asyncpg
from sqlalchemy.exc import DataError, DBAPIError, IntegrityError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

from elephantasm.domain.errors import ConflictError, DomainError, ValidationError

_UNIQUE, _FOREIGN_KEY, _NOT_NULL, _CHECK = "23505", "23503", "23502", "23514"


def _sqlstate(exc: BaseException) -> str | None:
    return getattr(getattr(exc, "orig", None), "sqlstate", None)


def _constraint(exc: Exception) -> str:
    cause = getattr(getattr(exc, "orig", None), "__cause__", None)
    name = getattr(cause, "constraint_name", None) or getattr(cause, "column_name", None)
    return f" ({name})" if name else ""


def to_domain_error(exc: DBAPIError) -> DomainError | None:
    """The domain error a database error means (see the module docstring), or None for the others.

    Classified by SQLSTATE: class 22 (data exceptions; asyncpg also raises its DataError, class 22,
    for a parameter it cannot encode) and class 23 (integrity constraint violations).
    """
    state, where = _sqlstate(exc) or "", _constraint(exc)
    if isinstance(exc, DataError) or state.startswith("22"):
        return ValidationError("a value is out of range or malformed for its field")
    if not (isinstance(exc, IntegrityError) or state.startswith("23")):
        return None
    if state == _UNIQUE:
        return ConflictError(f"conflicts with an existing record{where}; retry if this was a race")
    if state == _FOREIGN_KEY:
        return ConflictError(f"refers to a record that no longer exists{where}")
    if state in (_NOT_NULL, _CHECK):
        return ValidationError(f"a required value is missing or not allowed{where}")
    return ConflictError(f"conflicts with the current state of the data{where}")


@contextmanager
def domain_errors() -> Iterator[None]:
    """Raise database integrity and data errors inside the block as domain errors."""
    try:
        yield
    except DBAPIError as exc:
        mapped = to_domain_error(exc)
        if mapped is None:
            raise
        raise mapped from exc


# SQLSTATEs a retry can get past: a statement cancelled by statement_timeout (a stuck or overloaded
# database), a deadlock or serialization failure (the other transaction won), too many connections,
# and the server shutting down or starting up.
_RETRYABLE_STATES = frozenset({"57014", "40P01", "40001", "53300", "57P01", "57P02", "57P03"})
# Modules whose OSErrors mean "the database cannot be reached" (a refused TCP connection, a missing
# Unix socket of a stopped embedded server, a reset mid-query).
_DRIVER_MODULES = ("asyncpg", "sqlalchemy")
_CONNECTION_ERRORS = (
    PoolTimeoutError,
    asyncpg.PostgresConnectionError,
    asyncpg.InterfaceError,
    asyncpg.exceptions.CannotConnectNowError,
    asyncpg.exceptions.AdminShutdownError,
)

_DISK_FULL_STATE = "53100"

DATABASE_ERRORS: tuple[type[Exception], ...] = (DBAPIError, asyncpg.exceptions.DiskFullError, *_CONNECTION_ERRORS)
"""The exception classes the driver and SQLAlchemy raise for a failed statement or connection
(the driver raises ``DiskFullError`` as is on its own paths, e.g. COPY)."""


def is_disk_full(exc: BaseException) -> bool:
    """Whether the database refused a write because its disk is full (nothing was written)."""
    return _DISK_FULL_STATE in (getattr(exc, "sqlstate", None), _sqlstate(exc))


def _raised_by_driver(tb: TracebackType | None) -> bool:
    while tb is not None:
        if str(tb.tb_frame.f_globals.get("__name__", "")).startswith(_DRIVER_MODULES):
            return True
        tb = tb.tb_next
    return False


def is_unavailable(exc: BaseException) -> bool:
    """Whether ``exc`` means "cannot reach the database" rather than "this request is wrong".

    An ``OSError`` counts only when the driver raised it: a full disk or an unmounted volume elsewhere
    (the KV snapshot store, say) is not a database outage.
    """
    if isinstance(exc, OSError):
        return _raised_by_driver(exc.__traceback__)
    if isinstance(exc, _CONNECTION_ERRORS):
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
