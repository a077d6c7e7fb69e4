"""Response parsing and the HTTP-status → exception table. Pure functions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

from ..exceptions import (
    AuthenticationError,
    ConflictError,
    ElephantasmError,
    NotFoundError,
    PayloadTooLargeError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
    ValidationError,
)
from .request import RawResponse

M = TypeVar("M", bound=BaseModel)

#: Status → exception class. 5xx is handled by range; anything else maps to the base class.
ERROR_CLASSES: dict[int, type[ElephantasmError]] = {
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    413: PayloadTooLargeError,
    422: ValidationError,
    429: RateLimitError,
}


def error_class_for(status: int) -> type[ElephantasmError]:
    """The exception class for an error status."""
    if status >= 500:
        return ServerError
    return ERROR_CLASSES.get(status, ElephantasmError)


def extract_detail(raw: RawResponse) -> Any:
    """The server's ``detail`` (string or list of field errors), else the body text."""
    try:
        body = raw.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and "detail" in body:
        return body["detail"]
    text = raw.content.decode("utf-8", errors="replace").strip()
    return text or f"HTTP {raw.status}"


def _field_error_text(item: Any) -> str:
    if not isinstance(item, dict):
        return str(item)
    loc = item.get("loc") or item.get("key") or item.get("field")
    if isinstance(loc, (list, tuple)):
        loc = ".".join(str(part) for part in loc)
    msg = item.get("msg") or item.get("message") or str(item)
    return f"{loc}: {msg}" if loc else str(msg)


def detail_message(detail: Any) -> str:
    """A readable one-line message for a ``detail`` (field-error lists are joined)."""
    if isinstance(detail, str):
        return detail
    if isinstance(detail, list):
        return "; ".join(_field_error_text(item) for item in detail) or "Validation failed"
    return str(detail)


def error_from_response(raw: RawResponse) -> ElephantasmError:
    """Map an error response to its exception, carrying status, detail and headers."""
    detail = extract_detail(raw)
    cls = error_class_for(raw.status)
    return cls(detail_message(detail), raw.status, detail=detail, headers=dict(raw.headers))


def parse_model(model: type[M]) -> Callable[[RawResponse], M]:
    """Parser for a body that is one ``model``."""
    return lambda raw: model.model_validate(raw.json())


def parse_optional(model: type[M]) -> Callable[[RawResponse], M | None]:
    """Parser for a body that is one ``model`` or JSON ``null``."""

    def parse(raw: RawResponse) -> M | None:
        body = raw.json()
        return None if body is None else model.model_validate(body)

    return parse


def items_of(body: Any) -> list[Any]:
    """The items of a list body: a bare list, or the ``items`` of an envelope."""
    if body is None:
        return []
    if isinstance(body, list):
        return body
    if isinstance(body, dict):
        for key in ("items", "results", "data"):
            value = body.get(key)
            if isinstance(value, list):
                return value
    raise ElephantasmError(f"Expected a list response, got {type(body).__name__}")


def parse_list(model: type[M]) -> Callable[[RawResponse], list[M]]:
    """Parser for a list of ``model`` (bare or enveloped)."""
    return lambda raw: [model.model_validate(item) for item in items_of(raw.json())]


def parse_nothing(raw: RawResponse) -> None:
    """Parser for responses whose body does not matter (e.g. 204 on delete)."""
    return None
