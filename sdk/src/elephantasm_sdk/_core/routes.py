"""Operations for animas and events: request building plus response parser, no I/O."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any
from uuid import UUID

from pydantic_core import to_jsonable_python

from ..models import VALID_EVENT_TYPES, Anima, AnimaCreate, Event, EventCreate, EventType
from .pagination import Page, parse_page
from .request import Operation, RequestSpec, json_body, path_id, query_params
from .response import items_of, parse_model, parse_nothing

_EVENT_TYPE_ALIASES = {t.name: t.value for t in EventType}


def resolve_event_type(event_type: str | EventType) -> str:
    """Accept ``EventType`` members, dot-notation strings or upper-case enum names.

    Raises:
        ValueError: For unrecognised strings.
    """
    if isinstance(event_type, EventType):
        return event_type.value
    if event_type in VALID_EVENT_TYPES:
        return event_type
    alias = _EVENT_TYPE_ALIASES.get(str(event_type).upper())
    if alias:
        return alias
    raise ValueError(
        f"Invalid event_type '{event_type}'. Valid values: {sorted(VALID_EVENT_TYPES)}. "
        "Hint: use EventType enum members (e.g. EventType.MESSAGE_IN) or dot-notation strings."
    )


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def new_dedupe_key() -> str:
    """A fresh idempotency key (uuid4 hex)."""
    return uuid.uuid4().hex


# --- animas ----------------------------------------------------------------------------------


def create_anima(
    name: str, description: str | None = None, meta: dict[str, Any] | None = None, user_id: Any = None
) -> Operation[Anima]:
    """``POST /api/animas``."""
    data = AnimaCreate(name=name, description=description, meta=meta, user_id=user_id)
    body = data.model_dump(mode="json", exclude_none=True)
    return Operation(RequestSpec("POST", "/api/animas", json=body), parse_model(Anima))


def get_anima(anima_id: Any) -> Operation[Anima]:
    """``GET /api/animas/{id}``."""
    return Operation(RequestSpec("GET", f"/api/animas/{path_id(anima_id)}"), parse_model(Anima))


def list_animas(limit: int | None = None, cursor: str | None = None) -> Operation[Page[Anima]]:
    """``GET /api/animas`` (one page)."""
    spec = RequestSpec("GET", "/api/animas", params=query_params(limit=limit, cursor=cursor))
    return Operation(spec, parse_page(Anima))


def update_anima(anima_id: Any, **fields: Any) -> Operation[Anima]:
    """``PATCH /api/animas/{id}`` with the given (non-None) fields."""
    spec = RequestSpec("PATCH", f"/api/animas/{path_id(anima_id)}", json=json_body(**fields))
    return Operation(spec, parse_model(Anima))


def delete_anima(anima_id: Any) -> Operation[None]:
    """``DELETE /api/animas/{id}``."""
    return Operation(RequestSpec("DELETE", f"/api/animas/{path_id(anima_id)}"), parse_nothing)


# --- events ----------------------------------------------------------------------------------


def extract_event(
    anima_id: str,
    event_type: str | EventType,
    content: str,
    *,
    session_id: str | None = None,
    role: str | None = None,
    author: str | None = None,
    occurred_at: datetime | None = None,
    meta: dict[str, Any] | None = None,
    importance_score: float | None = None,
    summary: str | None = None,
    source_uri: str | None = None,
    dedupe_key: str | None = None,
) -> Operation[Event]:
    """``POST /api/events``. The body always carries a ``dedupe_key``, fixed for every retry."""
    data = EventCreate(
        anima_id=UUID(str(anima_id)),
        event_type=resolve_event_type(event_type),
        content=content,
        session_id=session_id,
        role=role,
        author=author,
        occurred_at=occurred_at,
        meta=meta or {},
        importance_score=importance_score,
        summary=summary,
        source_uri=source_uri,
        dedupe_key=dedupe_key or new_dedupe_key(),
    )
    body = data.model_dump(mode="json", exclude_none=True)
    return Operation(RequestSpec("POST", "/api/events", json=body), parse_model(Event))


def batch_item(item: EventCreate | Mapping[str, Any], default_anima_id: str | None) -> dict[str, Any]:
    """One batch entry as JSON, with the default anima, a resolved type and a dedupe key filled in.

    Mappings are passed through otherwise unchanged, so the server stays the judge of validity.
    """
    if isinstance(item, EventCreate):
        body = item.model_dump(mode="json", exclude_none=True)
    else:
        body = to_jsonable_python({k: v for k, v in dict(item).items() if v is not None})
    if not body.get("anima_id") and default_anima_id:
        body["anima_id"] = default_anima_id
    if isinstance(body.get("event_type"), str):
        with contextlib.suppress(ValueError):  # an unknown type: the server answers 422 with details
            body["event_type"] = resolve_event_type(body["event_type"])
    body.setdefault("dedupe_key", new_dedupe_key())
    return body


def batch_events(
    events: Sequence[EventCreate | Mapping[str, Any]], default_anima_id: str | None = None
) -> Operation[list[Event]]:
    """``POST /api/events/batch`` → the created events, in request order."""
    body = {"events": [batch_item(e, default_anima_id) for e in events]}
    parse = lambda raw: [Event.model_validate(i) for i in items_of(raw.json())]  # noqa: E731
    return Operation(RequestSpec("POST", "/api/events/batch", json=body), parse)


def list_events(
    anima_id: str | None,
    *,
    session_id: str | None = None,
    event_type: str | EventType | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: int | None = None,
    cursor: str | None = None,
) -> Operation[Page[Event]]:
    """``GET /api/events?anima_id=…&session_id=…&event_type=…&since=…&until=…`` (one page)."""
    etype = resolve_event_type(event_type) if event_type is not None else None
    params = query_params(
        anima_id=anima_id, session_id=session_id, event_type=etype, since=_iso(since), until=_iso(until),
        limit=limit, cursor=cursor,
    )  # fmt: skip
    return Operation(RequestSpec("GET", "/api/events", params=params), parse_page(Event))


def get_event(event_id: Any) -> Operation[Event]:
    """``GET /api/events/{id}``."""
    return Operation(RequestSpec("GET", f"/api/events/{path_id(event_id)}"), parse_model(Event))
