"""Make the OpenAPI document tell the truth about every route's errors.

Litestar documents each handler's success response and a generic ``400``. What the service really
answers on errors is decided in a few central places (the auth dependency, the input guards, the
error handlers), so it is documented here from the same facts, once for all routes (see
:func:`_statuses`), with the ``bearer`` scheme and path ids as ``format: uuid``.
"""

from __future__ import annotations

from typing import Any

from litestar import Litestar
from litestar.openapi.spec import (
    Components,
    OpenAPI,
    OpenAPIFormat,
    OpenAPIHeader,
    OpenAPIMediaType,
    OpenAPIResponse,
    OpenAPIType,
    Operation,
    Parameter,
    Reference,
    Schema,
    SecurityScheme,
)
from litestar.routes import HTTPRoute

CONFLICTS = {("POST", "/api/dreams/trigger")}
"""Operations that answer 409 (a state conflict), beyond the generic rules."""
RAW_BODIES = {("POST", "/api/animas/import"), ("POST", "/api/kv-packages")}
"""Operations that read a body Litestar does not decode (so none is documented): 413 applies too."""

_ERROR = "#/components/schemas/Error"
_RETRY_AFTER = OpenAPIHeader(
    schema=Schema(type=OpenAPIType.STRING, pattern="^[0-9]+$"), description="Seconds to wait before retrying."
)
_WHY = {
    401: "Missing, malformed, unknown, revoked or expired API key.",
    403: "The API key's scope (read < write < admin) does not allow this operation.",
    404: "Not found (another organisation's ids are not found either).",
    409: "Conflicts with the current state (a dream run already running, or a write that raced another).",
    413: "Request body or one item over its size limit.",
    422: "Invalid input; ``detail`` names the field (a list of field errors for schema violations).",
    429: "Too many failed authentication attempts from this address.",
    503: "The database is unavailable; retry after ``Retry-After`` seconds.",
    507: "Storage is full (the database's or the server's): nothing was written; ``detail`` says whose.",
}


def _error_schemas() -> dict[str, Schema]:
    field_error = Schema(
        type=OpenAPIType.OBJECT,
        required=["loc", "msg"],
        properties={
            "loc": Schema(
                type=OpenAPIType.ARRAY,
                items=Schema(one_of=[Schema(type=OpenAPIType.STRING), Schema(type=OpenAPIType.INTEGER)]),
            ),
            "msg": Schema(type=OpenAPIType.STRING),
        },
    )
    detail = Schema(
        one_of=[
            Schema(type=OpenAPIType.STRING),
            Schema(type=OpenAPIType.ARRAY, items=Reference("#/components/schemas/FieldError")),
        ]
    )
    error = Schema(
        type=OpenAPIType.OBJECT,
        required=["detail"],
        properties={"detail": detail},
        description="Every error body: JSON with ``detail``.",
    )
    return {"FieldError": field_error, "Error": error}


def _error_response(status: int) -> OpenAPIResponse:
    headers: dict[str, OpenAPIHeader | Reference] | None = (
        {"Retry-After": _RETRY_AFTER} if status in (429, 503) else None
    )
    if status == 401:
        headers = {"WWW-Authenticate": OpenAPIHeader(schema=Schema(type=OpenAPIType.STRING))}
    return OpenAPIResponse(
        description=_WHY[status],
        headers=headers,
        content={"application/json": OpenAPIMediaType(schema=Reference(_ERROR))},
    )


def _schema_mentions(openapi: OpenAPI, schema: Any, name: str, seen: set[str]) -> bool:
    """Whether ``schema`` (following ``$ref``s, items and unions) has a property called ``name``."""
    ref = getattr(schema, "ref", None)
    if ref is not None:
        if ref in seen:
            return False
        seen.add(ref)
        schema = (openapi.components.schemas or {}).get(ref.rsplit("/", 1)[-1])
    if schema is None:
        return False
    properties = getattr(schema, "properties", None) or {}
    if name in properties:
        return True
    children = [
        *properties.values(),
        getattr(schema, "items", None),
        *(getattr(schema, "one_of", None) or []),
        *(getattr(schema, "any_of", None) or []),
    ]
    return any(_schema_mentions(openapi, child, name, seen) for child in children if child is not None)


def _mentions_anima(openapi: OpenAPI, op: Operation) -> bool:
    """Whether the operation takes an ``anima_id`` (query or body): an unknown one is a 404."""
    if any(getattr(p, "name", None) == "anima_id" for p in op.parameters or []):
        return True
    content = getattr(op.request_body, "content", None) or {}
    return any(_schema_mentions(openapi, media.schema, "anima_id", set()) for media in content.values())


def _statuses(openapi: OpenAPI, method: str, path: str, op: Operation, authenticated: bool) -> set[int]:
    statuses = {422, 503}
    if authenticated:  # 507: even a read may write (the key's last use) on a full database disk
        statuses |= {401, 403, 429, 507}
    if "{" in path or _mentions_anima(openapi, op):
        statuses.add(404)
    if op.request_body is not None or (method, path) in RAW_BODIES:
        statuses.add(413)
    # Every write runs in a unit of work that maps integrity races to 409 (elephantasm/db/errors.py).
    if (method, path) in CONFLICTS or (authenticated and method not in ("GET", "HEAD", "OPTIONS")):
        statuses.add(409)
    return statuses


REPLAYS = {
    "/api/events": "The event already existed (same dedupe_key): the stored one.",
    "/api/events/batch": "Every event already existed (same dedupe_keys): the stored ones, `created` 0.",
}
"""Writes answered 200 instead of 201 when they only replay what is stored."""


def _document_operation(openapi: OpenAPI, method: str, path: str, op: Operation, authenticated: bool) -> None:
    responses: dict[str, Any] = dict(op.responses or {})
    responses.pop("400", None)  # never answered: undecodable or invalid input is a 422
    for status in sorted(_statuses(openapi, method, path, op, authenticated)):
        responses.setdefault(str(status), _error_response(status))
    if any(getattr(p, "name", "").lower() == "if-none-match" for p in op.parameters or []):
        responses["304"] = OpenAPIResponse(description="Not modified: the ETag given in If-None-Match still matches.")
    if method == "POST" and path in REPLAYS and "201" in responses:
        responses["200"] = OpenAPIResponse(description=REPLAYS[path], content=responses["201"].content)
    op.responses = responses
    for param in op.parameters or []:
        if isinstance(param, Parameter) and param.param_in == "path" and param.name.endswith("_id"):
            param.schema = Schema(type=OpenAPIType.STRING, format=OpenAPIFormat.UUID)
    op.security = [{"bearer": []}] if authenticated else [{}, {"bearer": []}]


def document_api(app: Litestar) -> None:
    """Complete the app's OpenAPI document in place (it is built once and cached by Litestar)."""
    openapi = app.openapi_schema
    components = openapi.components if isinstance(openapi.components, Components) else Components()
    components.schemas = {**(components.schemas or {}), **_error_schemas()}
    components.security_schemes = {
        **(components.security_schemes or {}),
        "bearer": SecurityScheme(type="http", scheme="bearer", description="Authorization: Bearer sk_live_…"),
    }
    openapi.components = components
    for route in app.routes:
        if not isinstance(route, HTTPRoute):
            continue
        item = (openapi.paths or {}).get(route.path_format)
        for handler in route.route_handlers:
            authenticated = "caller" in handler.parsed_fn_signature.parameters
            for method in handler.http_methods:
                op = getattr(item, method.lower(), None) if item is not None else None
                if isinstance(op, Operation):
                    _document_operation(openapi, method, route.path_format, op, authenticated)
