"""The OpenAPI document tells the truth (issue 11.7): every error status a route answers is
documented with the ``detail`` body, ids are UUIDs, enums are enums, and ``bearer`` is declared."""

from __future__ import annotations

import httpx
import pytest

from elephantasm.db.models import DREAM_STATUSES, EVENT_TYPES, KNOWLEDGE_TYPES, MEMORY_STATES
from elephantasm.domain.presets import PRESET_NAMES
from elephantasm.tokens import SUPPORTED_ENCODINGS

METHODS = ("get", "post", "put", "patch", "delete")


@pytest.fixture(scope="module")
async def doc(client: httpx.AsyncClient) -> dict:
    r = await client.get("/schema/openapi.json")
    assert r.status_code == 200
    return r.json()


def _operations(doc: dict):  # type: ignore[no-untyped-def]
    for path, item in doc["paths"].items():
        for method in METHODS:
            if method in item:
                yield method.upper(), path, item[method]


def _schema(doc: dict, name: str) -> dict:
    return doc["components"]["schemas"][name]


async def test_bearer_scheme_and_security_on_every_keyed_route(doc: dict) -> None:
    assert doc["components"]["securitySchemes"]["bearer"] == {
        "type": "http",
        "scheme": "bearer",
        "description": "Authorization: Bearer sk_live_…",
    }
    for method, path, op in _operations(doc):
        if path == "/api/health":
            assert {} in op["security"]
            continue
        assert op["security"] == [{"bearer": []}], (method, path)
        for status in ("401", "422", "429", "503"):
            assert status in op["responses"], (method, path, status)
        assert "retry-after" in {h.lower() for h in op["responses"]["429"]["headers"]}
        assert op["responses"]["401"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}
        assert "400" not in op["responses"], (method, path)


async def test_ids_are_uuids_and_lookups_document_404(doc: dict) -> None:
    seen = 0
    for method, path, op in _operations(doc):
        for param in op.get("parameters", []):
            if param["in"] == "path":
                seen += 1
                assert param["schema"] == {"type": "string", "format": "uuid"}, (path, param)
                assert "404" in op["responses"], (method, path)
        if "requestBody" in op:
            assert "413" in op["responses"] and "422" in op["responses"], (method, path)
    assert seen >= 15
    assert "409" in doc["paths"]["/api/dreams/trigger"]["post"]["responses"]
    assert "200" in doc["paths"]["/api/events"]["post"]["responses"]  # a dedupe hit
    assert "304" in doc["paths"]["/api/animas/{anima_id}/memory-packs/latest"]["get"]["responses"]
    assert "503" in doc["paths"]["/api/health"]["get"]["responses"]


def _enum(doc: dict, schema: dict) -> list:
    """The enum values of a schema, through a ``$ref`` to a component or a ``oneOf`` branch."""
    if "$ref" in schema:
        return _enum(doc, doc["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]])
    if "enum" in schema:
        return schema["enum"]
    return next(_enum(doc, s) for s in schema.get("oneOf", []) if "enum" in s or "$ref" in s)


async def test_enums_are_enums(doc: dict) -> None:
    assert _enum(doc, _schema(doc, "EventCreate")["properties"]["event_type"]) == list(EVENT_TYPES)
    assert _enum(doc, _schema(doc, "EventRead")["properties"]["event_type"]) == list(EVENT_TYPES)
    assert _enum(doc, _schema(doc, "MemoryRead")["properties"]["state"]) == list(MEMORY_STATES)
    assert _enum(doc, _schema(doc, "KnowledgeRead")["properties"]["type"]) == list(KNOWLEDGE_TYPES)
    assert _enum(doc, _schema(doc, "DreamRunRead")["properties"]["status"]) == list(DREAM_STATUSES)
    assert _enum(doc, _schema(doc, "PackCompileRequest")["properties"]["preset"]) == list(PRESET_NAMES)
    assert _enum(doc, _schema(doc, "PackCompileRequest")["properties"]["encoding"]) == list(SUPPORTED_ENCODINGS)
    queries = {
        ("/api/animas/{anima_id}/memory-packs/latest", "preset"): PRESET_NAMES,
        ("/api/animas/{anima_id}/memory-packs/latest", "encoding"): SUPPORTED_ENCODINGS,
        ("/api/events", "event_type"): EVENT_TYPES,
        ("/api/memories", "state"): MEMORY_STATES,
        ("/api/knowledge", "type"): KNOWLEDGE_TYPES,
        ("/api/dreams/sessions", "status"): DREAM_STATUSES,
    }
    for (path, name), values in queries.items():
        (param,) = [p for p in doc["paths"][path]["get"]["parameters"] if p["name"] == name]
        assert _enum(doc, param["schema"]) == list(values), (path, name, param)
