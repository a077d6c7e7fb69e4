"""``examples/agent_loop.py`` runs end to end against loopback fakes of both servers."""

from __future__ import annotations

import importlib.util
import uuid
from pathlib import Path

import pytest
from _sdk_support import LoopbackServer, Reply, anima_json, event_json, pack_json

pytest.importorskip("openai")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agent_loop.py"
A = "00000000-0000-4000-8000-0000000000a1"


def _load_example():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("agent_loop_example", EXAMPLE)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _fake(req) -> Reply:  # type: ignore[no-untyped-def]
    """One process playing both the chat endpoint and the Elephantasm API."""
    if req.path == "/v1/chat/completions":
        return Reply(200, {"id": "c1", "object": "chat.completion", "created": 0, "model": req.body["model"],
                           "choices": [{"index": 0, "finish_reason": "stop",
                                        "message": {"role": "assistant", "content": "You like green tea."}}],
                           "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})  # fmt: skip
    if req.path == "/api/animas":
        return Reply(201, anima_json(A, req.body["name"]))
    if req.path.endswith("/memory-packs/latest"):
        return Reply(200, pack_json(str(uuid.uuid4()), A, "## Knowledge\n- the user likes green tea"))
    if req.path == "/api/events":
        return Reply(201, event_json(str(uuid.uuid4()), A, req.body["content"], dedupe_key=req.body["dedupe_key"]))
    return Reply(404, {"detail": "no route"})


def test_agent_loop_injects_then_extracts(
    loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    loopback.handler = _fake
    monkeypatch.setenv("ELEPHANTASM_API_KEY", "sk_test")
    monkeypatch.setenv("ELEPHANTASM_ENDPOINT", loopback.url)
    monkeypatch.delenv("ELEPHANTASM_ANIMA_ID", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", f"{loopback.url}/v1")
    monkeypatch.setenv("OPENAI_MODEL", "tiny-model")
    assert _load_example().main(["--once", "What do I like to drink?"]) == 0
    assert "You like green tea." in capsys.readouterr().out

    paths = [(r.method, r.path) for r in loopback.requests]
    assert paths == [
        ("POST", "/api/animas"),
        ("GET", f"/api/animas/{A}/memory-packs/latest"),
        ("POST", "/v1/chat/completions"),
        ("POST", "/api/events"),
        ("POST", "/api/events"),
    ]
    chat = loopback.requests[2].body
    assert "the user likes green tea" in chat["messages"][0]["content"]
    assert chat["messages"][-1] == {"role": "user", "content": "What do I like to drink?"}
    user_event, assistant_event = loopback.requests[3].body, loopback.requests[4].body
    assert (user_event["event_type"], user_event["role"]) == ("message.in", "user")
    assert (assistant_event["event_type"], assistant_event["content"]) == ("message.out", "You like green tea.")
    assert user_event["session_id"] == assistant_event["session_id"]
