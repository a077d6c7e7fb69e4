"""Operations for memories, knowledge, identity, dreams and API keys. No I/O."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..models import ApiKey, DreamRun, Event, Identity, IdentityVersion, Knowledge, Memory
from .pagination import Page, parse_page
from .request import Operation, RequestSpec, json_body, path_id, query_params
from .response import parse_list, parse_model, parse_nothing

# --- memories --------------------------------------------------------------------------------


def list_memories(
    anima_id: str, state: str | None = None, limit: int | None = None, cursor: str | None = None
) -> Operation[Page[Memory]]:
    """``GET /api/memories?anima_id&state`` (one page)."""
    params = query_params(anima_id=anima_id, state=state, limit=limit, cursor=cursor)
    return Operation(RequestSpec("GET", "/api/memories", params=params), parse_page(Memory))


def get_memory(memory_id: Any) -> Operation[Memory]:
    """``GET /api/memories/{id}``."""
    return Operation(RequestSpec("GET", f"/api/memories/{path_id(memory_id)}"), parse_model(Memory))


def update_memory(memory_id: Any, **fields: Any) -> Operation[Memory]:
    """``PATCH /api/memories/{id}`` with the given (non-None) fields."""
    spec = RequestSpec("PATCH", f"/api/memories/{path_id(memory_id)}", json=json_body(**fields))
    return Operation(spec, parse_model(Memory))


def delete_memory(memory_id: Any) -> Operation[None]:
    """``DELETE /api/memories/{id}``."""
    return Operation(RequestSpec("DELETE", f"/api/memories/{path_id(memory_id)}"), parse_nothing)


def memory_events(memory_id: Any) -> Operation[list[Event]]:
    """``GET /api/memories/{id}/events``: the events a memory came from."""
    return Operation(RequestSpec("GET", f"/api/memories/{path_id(memory_id)}/events"), parse_list(Event))


def search_memories(anima_id: str, query: str, limit: int | None = None, **options: Any) -> Operation[list[Memory]]:
    """``POST /api/memories/search/semantic``."""
    body = json_body(anima_id=anima_id, query=query, limit=limit, **options)
    return Operation(RequestSpec("POST", "/api/memories/search/semantic", json=body), parse_list(Memory))


# --- knowledge -------------------------------------------------------------------------------


def list_knowledge(
    anima_id: str,
    type: str | None = None,
    topic: str | None = None,
    limit: int | None = None,
    cursor: str | None = None,
) -> Operation[Page[Knowledge]]:
    """``GET /api/knowledge?anima_id&type&topic`` (one page)."""
    params = query_params(anima_id=anima_id, type=type, topic=topic, limit=limit, cursor=cursor)
    return Operation(RequestSpec("GET", "/api/knowledge", params=params), parse_page(Knowledge))


def get_knowledge(knowledge_id: Any) -> Operation[Knowledge]:
    """``GET /api/knowledge/{id}``."""
    return Operation(RequestSpec("GET", f"/api/knowledge/{path_id(knowledge_id)}"), parse_model(Knowledge))


def delete_knowledge(knowledge_id: Any) -> Operation[None]:
    """``DELETE /api/knowledge/{id}``: forget one knowledge item (its source memories stay)."""
    return Operation(RequestSpec("DELETE", f"/api/knowledge/{path_id(knowledge_id)}"), parse_nothing)


def knowledge_history(knowledge_id: Any) -> Operation[list[Knowledge]]:
    """``GET /api/knowledge/{id}/history``: the item and the versions it superseded."""
    path = f"/api/knowledge/{path_id(knowledge_id)}/history"
    return Operation(RequestSpec("GET", path), parse_list(Knowledge))


def search_knowledge(anima_id: str, query: str, limit: int | None = None, **options: Any) -> Operation[list[Knowledge]]:
    """``POST /api/knowledge/search/semantic``."""
    body = json_body(anima_id=anima_id, query=query, limit=limit, **options)
    return Operation(RequestSpec("POST", "/api/knowledge/search/semantic", json=body), parse_list(Knowledge))


# --- identity --------------------------------------------------------------------------------


def get_identity(anima_id: str) -> Operation[Identity]:
    """``GET /api/identities/anima/{id}``."""
    return Operation(RequestSpec("GET", f"/api/identities/anima/{path_id(anima_id)}"), parse_model(Identity))


def identity_history(anima_id: str) -> Operation[list[IdentityVersion]]:
    """``GET /api/identities/anima/{id}/history``."""
    path = f"/api/identities/anima/{path_id(anima_id)}/history"
    return Operation(RequestSpec("GET", path), parse_list(IdentityVersion))


def restore_identity(anima_id: str, version: int) -> Operation[Identity]:
    """``POST /api/identities/anima/{id}/restore`` with ``{"version": n}``."""
    path = f"/api/identities/anima/{path_id(anima_id)}/restore"
    return Operation(RequestSpec("POST", path, json={"version": version}), parse_model(Identity))


# --- dreams ----------------------------------------------------------------------------------


def trigger_dream(anima_id: str) -> Operation[DreamRun]:
    """``POST /api/dreams/trigger`` → 202 with the run (409 if one is already running)."""
    spec = RequestSpec("POST", "/api/dreams/trigger", json={"anima_id": anima_id})
    return Operation(spec, parse_model(DreamRun))


def list_dream_sessions(
    anima_id: str | None = None, status: str | None = None, limit: int | None = None, cursor: str | None = None
) -> Operation[Page[DreamRun]]:
    """``GET /api/dreams/sessions[?anima_id&status]`` (one page)."""
    params = query_params(anima_id=anima_id, status=status, limit=limit, cursor=cursor)
    return Operation(RequestSpec("GET", "/api/dreams/sessions", params=params), parse_page(DreamRun))


def get_dream_session(run_id: Any) -> Operation[DreamRun]:
    """``GET /api/dreams/sessions/{id}``."""
    return Operation(RequestSpec("GET", f"/api/dreams/sessions/{path_id(run_id)}"), parse_model(DreamRun))


def poll_delay(remaining: float, poll_interval: float) -> float | None:
    """How long to sleep before polling again, or None once the deadline has passed."""
    return None if remaining <= 0 else max(0.0, min(poll_interval, remaining))


# --- API keys --------------------------------------------------------------------------------


def list_keys() -> Operation[list[ApiKey]]:
    """``GET /api/keys``."""
    return Operation(RequestSpec("GET", "/api/keys"), parse_list(ApiKey))


def create_key(
    name: str | None = None, expires_at: datetime | None = None, scope: str | None = None
) -> Operation[ApiKey]:
    """``POST /api/keys``; the response carries the secret ``key`` once. ``scope``: admin, write or read
    (default: the calling key's; never more, nor a later expiry than the calling key's)."""
    spec = RequestSpec("POST", "/api/keys", json=json_body(name=name, expires_at=expires_at, scope=scope))
    return Operation(spec, parse_model(ApiKey))


def revoke_key(key_id: Any) -> Operation[None]:
    """``DELETE /api/keys/{id}``."""
    return Operation(RequestSpec("DELETE", f"/api/keys/{path_id(key_id)}"), parse_nothing)
