"""Shared dependencies and parameter declarations for route handlers."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from enum import StrEnum
from typing import Annotated, Any, TypeVar

from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import Parameter, QueryParameter

from elephantasm.domain.errors import ValidationError
from elephantasm.runtime import Runtime
from elephantasm.services.keys import Caller

E = TypeVar("E", bound=StrEnum)
Limit = Annotated[int, Parameter(ge=1, le=1000, description="Page size (1–1000).")]
Cursor = Annotated[str | None, Parameter(description="Opaque cursor from the previous page's next_cursor.")]


def QueryInstant(description: str) -> Any:
    """A query-string instant, documented as ``date-time`` and parsed strictly by
    :func:`api.guards.query_instant` (a number is refused, not read as Unix seconds)."""
    return Annotated[str | None, QueryParameter(description=description, schema_extra={"format": "date-time"})]


def one_of_param(enum: type[StrEnum], name: str | None = None, description: str | None = None) -> Any:
    """A query parameter restricted to ``enum``'s values (an enum in the OpenAPI schema); parse it
    with :func:`parse_enum`, whose 422 names the parameter and lists the valid values."""
    return Annotated[
        str | None, QueryParameter(name=name, description=description, schema_extra={"enum": [m.value for m in enum]})
    ]


def one_of(name: str, value: str | None, allowed: Sequence[str]) -> str | None:
    """``value`` if it is one of ``allowed`` (None stays None), else a 422 naming ``name`` and
    listing the valid values."""
    if value is not None and value not in allowed:
        raise ValidationError(f"{name}: unknown {value!r}; valid values: {', '.join(allowed)}")
    return value


def parse_enum(enum: type[E], name: str, value: str | None) -> E | None:
    """``value`` as a member of ``enum`` (None stays None), or a 422 naming ``name``."""
    checked = one_of(name, value, [m.value for m in enum])
    return None if checked is None else enum(checked)


def parse_uuid(name: str, value: str) -> uuid.UUID:
    """Path ids are parsed here, not by the router, so a bad id is a 422 naming the field, not a 404."""
    try:
        return uuid.UUID(value)
    except ValueError:
        raise ValidationError(f"{name}: {value!r} is not a valid UUID") from None


def provide_runtime(state: State) -> Runtime:
    """The process runtime stored on the app at startup."""
    return state.runtime


# Explicit markers (Litestar 3 drops inferred dependencies); ``Caller`` comes from api.auth.
RuntimeDep = NamedDependency[Runtime]
CallerDep = NamedDependency[Caller]
