"""Transport-level input guards: undecodable bodies, NUL or non-UTF-8 query strings, query instants,
and the JSON limits of request bodies. Each turns hostile input into a 422 with ``detail`` instead
of letting it reach the database (where it would be a 500)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any
from urllib.parse import parse_qsl

from litestar import Request
from litestar.types import ASGIApp, Receive, Scope, Send
from pydantic import BaseModel

from api.errors import asgi_error
from elephantasm.domain.errors import ValidationError
from elephantasm.domain.inputs import instant_problem, parse_iso_instant
from elephantasm.runtime import Runtime
from elephantasm.schemas.common import check_json_fields


@contextmanager
def json_decode_errors() -> Iterator[None]:
    """A JSON body that is not UTF-8, or nested past what the decoder can take, is a 422 like any
    other malformed JSON, not a ``UnicodeDecodeError``/``RecursionError`` (500)."""
    try:
        yield
    except UnicodeDecodeError as exc:
        raise ValidationError(
            f"malformed JSON body: not valid UTF-8 (byte 0x{exc.object[exc.start]:02x} at position {exc.start})"
        ) from None
    except RecursionError:
        raise ValidationError("malformed JSON body: nested too deeply to decode") from None


class GuardedRequest(Request):
    """A request whose JSON body is decoded under :func:`json_decode_errors`."""

    async def json(self) -> Any:
        """The decoded body."""
        with json_decode_errors():
            return await super().json()


def _query_problem(scope: Scope) -> str | None:
    """Why the path or query string cannot be served: not UTF-8, or a NUL anywhere."""
    raw = scope.get("query_string", b"")
    try:
        pairs = parse_qsl(raw.decode("latin-1"), keep_blank_values=True, encoding="utf-8", errors="strict")
    except UnicodeDecodeError:
        return "query string: not valid UTF-8 after percent-decoding"
    for name, value in pairs:
        if "\x00" in name or "\x00" in value:
            return f"{name.replace(chr(0), '?')}: contains a NUL character (\\u0000); it cannot be stored or searched"
    if "\x00" in scope.get("path", ""):
        return "path: contains a NUL character (\\u0000)"
    return None


def query_guard(app: ASGIApp) -> ASGIApp:
    """Middleware: a query string that is not UTF-8 or holds NUL is answered 422 before routing."""

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        problem = _query_problem(scope) if scope["type"] == "http" else None
        if problem is None:
            await app(scope, receive, send)
        else:
            await asgi_error(422, problem)(scope, receive, send)

    return guarded


def query_instant(name: str, value: str | None) -> datetime | None:
    """A query-string instant (``since``, ``until``…): an ISO 8601 date-time, aware and inside the
    sane window (a number is not read as Unix seconds), or a 422 naming ``name``."""
    if value is None:
        return None
    try:
        instant = parse_iso_instant(value)
    except ValueError as exc:
        raise ValidationError(f"{name}: {exc}") from None
    problem = instant_problem(instant)
    if problem:
        raise ValidationError(f"{name}: {problem}")
    return instant


def check_json(data: BaseModel, runtime: Runtime) -> None:
    """Every free-form JSON field of a request body within ``max_json_depth``/``max_json_bytes``."""
    check_json_fields(data, runtime.settings.max_json_depth, runtime.settings.max_json_bytes)
