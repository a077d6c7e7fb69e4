"""Request descriptions: what to send, as plain data. Nothing here touches the network."""

from __future__ import annotations

import platform
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Generic, TypeVar
from urllib.parse import quote

from pydantic_core import to_jsonable_python

T = TypeVar("T")

SDK_VERSION = "0.3.0"


@dataclass(frozen=True)
class RequestSpec:
    """One HTTP request, fully described: method, path under the endpoint, query, JSON body, headers."""

    method: str
    path: str
    params: Mapping[str, str] = field(default_factory=dict)
    json: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RawResponse:
    """What came back: status, lower-cased headers and the body bytes."""

    status: int
    headers: Mapping[str, str]
    content: bytes = b""

    def json(self) -> Any:
        """The decoded JSON body; an empty body decodes to None."""
        import json

        return json.loads(self.content) if self.content.strip() else None


@dataclass(frozen=True)
class Operation(Generic[T]):
    """A request plus the pure function that turns a successful response into a result."""

    request: RequestSpec
    parse: Callable[[RawResponse], T]


def default_headers(api_key: str) -> dict[str, str]:
    """Headers sent on every request."""
    return {
        "Authorization": f"Bearer {api_key}",
        "Accept": "application/json",
        "User-Agent": f"elephantasm-sdk/{SDK_VERSION} python/{platform.python_version()}",
    }


def _param_value(value: Any) -> str:
    if isinstance(value, Enum):
        value = value.value
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def query_params(**values: Any) -> dict[str, str]:
    """Query parameters with ``None`` dropped and values rendered as strings."""
    return {k: _param_value(v) for k, v in values.items() if v is not None}


def json_body(**values: Any) -> dict[str, Any]:
    """A JSON-ready body with ``None`` dropped (datetimes, UUIDs and enums rendered)."""
    body: dict[str, Any] = to_jsonable_python({k: v for k, v in values.items() if v is not None})
    return body


def path_id(value: Any) -> str:
    """An id made safe for a path segment."""
    text = "" if value is None else str(value)
    if not text:
        raise ValueError("an id is required")
    return quote(text, safe="")


def require_anima_id(anima_id: Any, default: str | None) -> str:
    """The explicit anima id, else the client's default.

    Raises:
        ValueError: If neither is set.
    """
    resolved = str(anima_id) if anima_id else default
    if not resolved:
        raise ValueError("anima_id required. Provide parameter or set default in client.")
    return resolved
