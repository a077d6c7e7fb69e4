"""The one place where database errors become domain errors (the advanced-alchemy pattern).

A unique violation is a 409 (two writers raced to the same row, e.g. two keys to one hash), a
foreign-key violation a 409 (it refers to a row deleted meanwhile), a NOT NULL/CHECK violation or
a value the column cannot hold (rejected by Postgres, or by the driver before sending: an int
beyond int32, say) a 422. Other database errors (connection loss…) pass through unchanged. Details
name the constraint, never the values: those are user content, and this text reaches clients and logs.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.exc import DataError, DBAPIError, IntegrityError

from elephantasm.domain.errors import ConflictError, DomainError, ValidationError

_UNIQUE, _FOREIGN_KEY, _NOT_NULL, _CHECK = "23505", "23503", "23502", "23514"


def _sqlstate(exc: Exception) -> str | None:
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
