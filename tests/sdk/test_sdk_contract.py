"""The SDK's models agree with the server's OpenAPI document (``/schema/openapi.json``).

Every field an SDK response model declares must exist in the matching server schema (recursively
for the pack's typed layers); every field an SDK request model can send must be accepted by the
server's request schema (the server rejects unknown fields).
"""

from __future__ import annotations

import re
import types
import typing
import warnings
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from elephantasm_sdk import Anima, AnimaCreate, Event, EventCreate, MemoryPack


@pytest.fixture(scope="module")
def openapi(live_server: str) -> dict[str, Any]:
    response = httpx.get(f"{live_server}/schema/openapi.json", timeout=30)
    assert response.status_code == 200, response.text
    return response.json()


def _operation(doc: dict[str, Any], pattern: str, method: str) -> dict[str, Any]:
    for path, item in doc["paths"].items():
        if re.fullmatch(pattern, path) and method in item:
            return item[method]
    pytest.fail(f"the server's OpenAPI has no {method.upper()} {pattern}")


def _resolve(doc: dict[str, Any], schema: dict[str, Any] | None) -> dict[str, Any]:
    """Follow $ref and drop the null branch of an optional; unwrap arrays to their items."""
    while schema:
        if "$ref" in schema:
            schema = doc["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
        elif "anyOf" in schema or "oneOf" in schema:
            branches = [b for b in (schema.get("anyOf") or schema.get("oneOf")) if b.get("type") != "null"]
            if len(branches) != 1:
                break  # a real union: treated as free-form
            schema = branches[0]
        elif schema.get("type") == "array":
            schema = schema.get("items")
        else:
            break
    return schema or {}


def _json_schema(doc: dict[str, Any], block: dict[str, Any]) -> dict[str, Any]:
    content = block.get("content", {})
    media = content.get("application/json") or next(iter(content.values()), {})
    return _resolve(doc, media.get("schema"))


def _response_schema(doc: dict[str, Any], op: dict[str, Any]) -> dict[str, Any]:
    for status in ("200", "201", "202"):
        if status in op.get("responses", {}):
            return _json_schema(doc, op["responses"][status])
    pytest.fail(f"no success response in {op.get('operationId')}")


def _nested_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is not None:
        for arg in typing.get_args(annotation):
            found = _nested_model(arg)
            if found is not None:
                return found
    return None


def _missing_fields(doc: dict[str, Any], model: type[BaseModel], schema: dict[str, Any], where: str) -> list[str]:
    props = schema.get("properties")
    if not props:
        warnings.warn(f"{where}: server schema is free-form; {model.__name__} fields unverifiable", stacklevel=2)
        return []
    missing = []
    for name, field in model.model_fields.items():
        key = field.alias or name
        if key not in props:
            missing.append(f"{where}.{key}")
            continue
        nested = _nested_model(field.annotation)
        if nested is not None:
            missing += _missing_fields(doc, nested, _resolve(doc, props[key]), f"{where}.{key}")
    return missing


RESPONSES = [
    (Anima, r"/api/animas/?", "post"),
    (Event, r"/api/events/\{[^}]+\}", "get"),
    (MemoryPack, r"/api/animas/\{[^}]+\}/memory-packs/latest", "get"),
]


@pytest.mark.parametrize(("model", "path", "method"), RESPONSES, ids=[m.__name__ for m, _, _ in RESPONSES])
def test_response_models_match_server(openapi: dict[str, Any], model: type[BaseModel], path: str, method: str) -> None:
    schema = _response_schema(openapi, _operation(openapi, path, method))
    assert _missing_fields(openapi, model, schema, model.__name__) == []


REQUESTS = [(AnimaCreate, r"/api/animas/?"), (EventCreate, r"/api/events/?")]


@pytest.mark.parametrize(("model", "path"), REQUESTS, ids=[m.__name__ for m, _ in REQUESTS])
def test_request_models_are_accepted_by_server(openapi: dict[str, Any], model: type[BaseModel], path: str) -> None:
    op = _operation(openapi, path, "post")
    schema = _json_schema(openapi, op.get("requestBody", {}))
    extra = sorted(set(model.model_fields) - set(schema.get("properties", {})))
    assert extra == [], f"the SDK can send fields the server rejects: {extra}"
