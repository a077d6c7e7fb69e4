"""The one place where database errors become domain errors (the advanced-alchemy pattern).

A unique violation is a 409 (two writers raced to the same row, e.g. two keys to one hash), a
foreign-key violation a 409 (it refers to a row deleted meanwhile), a NOT NULL/CHECK violation or
a value the column cannot hold a 422. Details name the constraint, never the values: those are
user content, and this text reaches clients and logs.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.exc import DataError, IntegrityError

from elephantasm.domain.errors import ConflictError, DomainError, ValidationError

_UNIQUE, _FOREIGN_KEY, _NOT_NULL, _CHECK = "23505", "23503", "23502", "23514"


def _sqlstate(exc: Exception) -> str | None:
    return getattr(getattr(exc, "orig", None), "sqlstate", None)


def _constraint(exc: Exception) -> str:
    cause = getattr(getattr(exc, "orig", None), "__cause__", None)
    name = getattr(cause, "constraint_name", None) or getattr(cause, "column_name", None)
    return f" ({name})" if name else ""


def to_domain_error(exc: IntegrityError | DataError) -> DomainError:
    """The domain error a database error means (see the module docstring)."""
    state, where = _sqlstate(exc), _constraint(exc)
    if isinstance(exc, DataError):
        return ValidationError("a value is out of range or malformed for its field")
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
    except (IntegrityError, DataError) as exc:
        raise to_domain_error(exc) from exc
