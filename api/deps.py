"""Shared dependencies and parameter declarations for route handlers."""

from __future__ import annotations

from typing import Annotated

from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.params import Parameter

from elephantasm.runtime import Runtime
from elephantasm.services.keys import Caller

Limit = Annotated[int, Parameter(ge=1, le=1000, description="Page size (1–1000).")]
Cursor = Annotated[str | None, Parameter(description="Opaque cursor from the previous page's next_cursor.")]


def provide_runtime(state: State) -> Runtime:
    """The process runtime stored on the app at startup."""
    return state.runtime

# Explicit markers (Litestar 3 drops inferred dependencies); ``Caller`` comes from api.auth.
RuntimeDep = NamedDependency[Runtime]
CallerDep = NamedDependency[Caller]
