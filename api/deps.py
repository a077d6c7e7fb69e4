"""Shared dependencies and parameter declarations for route handlers."""

from __future__ import annotations

import uuid
from typing import Annotated

from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import Parameter

from elephantasm.domain.errors import ValidationError
from elephantasm.runtime import Runtime
from elephantasm.services.keys import Caller

Limit = Annotated[int, Parameter(ge=1, le=1000, description="Page size (1–1000).")]
Cursor = Annotated[str | None, Parameter(description="Opaque cursor from the previous page's next_cursor.")]


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
