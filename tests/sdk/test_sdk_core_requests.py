"""Pure request building: every operation's method, path, query and body."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import pytest
from _sdk_support import pack_json

from elephantasm_sdk import EventCreate, EventType, KnowledgeType, MemoryState
from elephantasm_sdk._core import routes
from elephantasm_sdk._core import routes_curated as rc
from elephantasm_sdk._core.packs import PackKey, PackResult, compile_pack, latest_pack
from elephantasm_sdk._core.request import RawResponse, default_headers, require_anima_id
from elephantasm_sdk.config import resolve_options

A = "00000000-0000-4000-8000-0000000000a1"
M = "00000000-0000-4000-8000-0000000000b2"

CASES = [
    (routes.create_anima("bot", "d", {"k": 1}), "POST", "/api/animas", {}, {"name": "bot", "description": "d", "meta": {"k": 1}}),
    (routes.get_anima(A), "GET", f"/api/animas/{A}", {}, None),
    (routes.list_animas(limit=5, cursor="c1"), "GET", "/api/animas", {"limit": "5", "cursor": "c1"}, None),
    (routes.update_anima(A, name="n", description=None), "PATCH", f"/api/animas/{A}", {}, {"name": "n"}),
    (routes.delete_anima(A), "DELETE", f"/api/animas/{A}", {}, None),
    (routes.get_event(M), "GET", f"/api/events/{M}", {}, None),
    (routes.list_events(A, session_id="s", event_type="TOOL_CALL", limit=10), "GET", "/api/events",
     {"anima_id": A, "session_id": "s", "event_type": "tool.call", "limit": "10"}, None),
    (compile_pack(A, query="q", preset="p", max_tokens=100, encoding="cl100k_base"), "POST", "/api/packs/compile", {},
     {"anima_id": A, "query": "q", "preset": "p", "max_tokens": 100, "encoding": "cl100k_base"}),
    (rc.list_memories(A, MemoryState.ACTIVE, 3), "GET", "/api/memories", {"anima_id": A, "state": "active", "limit": "3"}, None),
    (rc.get_memory(M), "GET", f"/api/memories/{M}", {}, None),
    (rc.update_memory(M, summary="s", importance=0.9, state=MemoryState.ARCHIVED, content=None), "PATCH",
     f"/api/memories/{M}", {}, {"summary": "s", "importance": 0.9, "state": "archived"}),
    (rc.delete_memory(M), "DELETE", f"/api/memories/{M}", {}, None),
    (rc.memory_events(M), "GET", f"/api/memories/{M}/events", {}, None),
    (rc.search_memories(A, "tea", 5), "POST", "/api/memories/search/semantic", {}, {"anima_id": A, "query": "tea", "limit": 5}),
    (rc.list_knowledge(A, KnowledgeType.FACT, "drinks"), "GET", "/api/knowledge",
     {"anima_id": A, "type": "FACT", "topic": "drinks"}, None),
    (rc.get_knowledge(M), "GET", f"/api/knowledge/{M}", {}, None),
    (rc.knowledge_history(M), "GET", f"/api/knowledge/{M}/history", {}, None),
    (rc.delete_knowledge(M), "DELETE", f"/api/knowledge/{M}", {}, None),
    (rc.search_knowledge(A, "tea"), "POST", "/api/knowledge/search/semantic", {}, {"anima_id": A, "query": "tea"}),
    (rc.get_identity(A), "GET", f"/api/identities/anima/{A}", {}, None),
    (rc.identity_history(A), "GET", f"/api/identities/anima/{A}/history", {}, None),
    (rc.restore_identity(A, 3), "POST", f"/api/identities/anima/{A}/restore", {}, {"version": 3}),
    (rc.trigger_dream(A), "POST", "/api/dreams/trigger", {}, {"anima_id": A}),
    (rc.list_dream_sessions(A, "running"), "GET", "/api/dreams/sessions", {"anima_id": A, "status": "running"}, None),
    (rc.list_dream_sessions(), "GET", "/api/dreams/sessions", {}, None),
    (rc.get_dream_session(M), "GET", f"/api/dreams/sessions/{M}", {}, None),
    (rc.list_keys(), "GET", "/api/keys", {}, None),
    (rc.create_key("ci"), "POST", "/api/keys", {}, {"name": "ci"}),
    (rc.create_key("ro", scope="read"), "POST", "/api/keys", {}, {"name": "ro", "scope": "read"}),
    (rc.revoke_key(M), "DELETE", f"/api/keys/{M}", {}, None),
]  # fmt: skip


@pytest.mark.parametrize(("op", "method", "path", "params", "body"), CASES, ids=lambda v: None)
def test_request_building(op, method, path, params, body) -> None:
    spec = op.request
    assert (spec.method, spec.path, dict(spec.params), spec.json) == (method, path, params, body)


def test_path_ids_are_escaped_and_required() -> None:
    assert routes.get_anima("a/b?c").request.path == "/api/animas/a%2Fb%3Fc"
    with pytest.raises(ValueError):
        routes.get_anima(None)


def test_extract_always_sends_a_dedupe_key_and_resolves_types() -> None:
    when = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
    op = routes.extract_event(A, "MESSAGE_IN", "hello", role="user", occurred_at=when, importance_score=0.5)
    body = op.request.json
    assert (op.request.method, op.request.path) == ("POST", "/api/events")
    assert body["event_type"] == "message.in" and body["anima_id"] == A and body["role"] == "user"
    assert body["occurred_at"].startswith("2025-01-02T03:04:05") and body["importance_score"] == 0.5
    assert re.fullmatch(r"[0-9a-f]{32}", body["dedupe_key"])
    other = routes.extract_event(A, EventType.TOOL_CALL, "x").request.json
    assert other["dedupe_key"] != body["dedupe_key"] and other["event_type"] == "tool.call"
    assert routes.extract_event(A, "tool.result", "x", dedupe_key="mine").request.json["dedupe_key"] == "mine"
    with pytest.raises(ValueError, match="Invalid event_type"):
        routes.extract_event(A, "bogus", "x")


def test_batch_fills_defaults_and_keeps_order() -> None:
    items = [
        EventCreate(anima_id=A, event_type="message.in", content="one"),
        {"event_type": "MESSAGE_OUT", "content": "two", "dedupe_key": "k2"},
        {"event_type": "message.in"},  # invalid on purpose: the server is the judge
    ]
    body = routes.batch_events(items, default_anima_id=A).request.json
    events = body["events"]
    assert [e.get("content") for e in events] == ["one", "two", None]
    assert all(e["anima_id"] == A for e in events)
    assert events[1]["event_type"] == "message.out" and events[1]["dedupe_key"] == "k2"
    assert len({e["dedupe_key"] for e in events}) == 3


def test_latest_pack_request_and_conditional_header() -> None:
    key = PackKey(A, "tea?", "conversational", 500, "o200k_base")
    spec = latest_pack(key).request
    assert spec.path == f"/api/animas/{A}/memory-packs/latest"
    assert dict(spec.params) == {
        "query": "tea?",
        "preset": "conversational",
        "max_tokens": "500",
        "encoding": "o200k_base",
    }
    assert "If-None-Match" not in spec.headers
    cached = PackResult(pack=None, etag='"abc"')
    assert latest_pack(key, cached).request.headers["If-None-Match"] == '"abc"'
    bare = latest_pack(PackKey(A, None, None, None, None)).request
    assert dict(bare.params) == {}


def test_latest_pack_parsing() -> None:
    key = PackKey(A, None, None, None, None)
    body = pack_json(M, A)
    fresh = latest_pack(key).parse(RawResponse(200, {"etag": '"e1"'}, json.dumps(body).encode()))
    assert fresh.pack is not None and fresh.etag == '"e1"' and not fresh.not_modified
    assert latest_pack(key).parse(RawResponse(200, {}, b"null")).pack is None
    reused = latest_pack(key, fresh).parse(RawResponse(304, {}, b""))
    assert reused.pack is fresh.pack and reused.not_modified


def test_headers_and_anima_resolution() -> None:
    headers = default_headers("sk_live_x")
    assert headers["Authorization"] == "Bearer sk_live_x"
    assert headers["User-Agent"].startswith("elephantasm-sdk/")
    assert require_anima_id(None, "dflt") == "dflt" and require_anima_id(A, "dflt") == A
    with pytest.raises(ValueError, match="anima_id required"):
        require_anima_id(None, None)


def test_options_from_environment() -> None:
    env = {"ELEPHANTASM_API_KEY": "k", "ELEPHANTASM_ANIMA_ID": A, "ELEPHANTASM_ENDPOINT": "http://h:1/",
           "ELEPHANTASM_TIMEOUT": "7", "ELEPHANTASM_MAX_RETRIES": "5"}  # fmt: skip
    opts = resolve_options(env=env)
    assert (opts.api_key, opts.anima_id, opts.endpoint, opts.timeout, opts.retry.max_retries) == (
        "k",
        A,
        "http://h:1",
        7.0,
        5,
    )
    explicit = resolve_options(api_key="x", endpoint="http://e", timeout=2, max_retries=0, env=env)
    assert (explicit.api_key, explicit.endpoint, explicit.timeout, explicit.retry.max_retries) == (
        "x",
        "http://e",
        2.0,
        0,
    )
    with pytest.raises(ValueError, match="API key required"):
        resolve_options(env={})
