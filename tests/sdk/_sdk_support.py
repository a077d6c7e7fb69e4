"""Helpers for the SDK tests: a scriptable loopback HTTP server and sync/async call shims."""

from __future__ import annotations

import inspect
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Recorded:
    """One request as the server saw it."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any
    at: float


@dataclass
class Reply:
    """What the server answers. ``drop`` closes the connection without a response."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    drop: bool = False
    delay: float = 0.0
    raw: bytes | None = None


Handler = Callable[[Recorded], Reply]


class LoopbackServer:
    """A real HTTP server on 127.0.0.1 (random port) in a thread.

    Replies come from a script queue (``script``) and, once it is empty, from ``handler``.
    """

    def __init__(self, handler: Handler | None = None) -> None:
        self.requests: list[Recorded] = []
        self.handler: Handler = handler or (lambda req: Reply(404, {"detail": "no route"}))
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._make_handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def script(self, *replies: Reply) -> None:
        """Queue replies to use, in order, before falling back to the handler."""
        with self._lock:
            self._script.extend(replies)

    def start(self) -> LoopbackServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _next_reply(self, req: Recorded) -> Reply:
        with self._lock:
            self.requests.append(req)
            scripted = self._script.popleft() if self._script else None
        return scripted or self.handler(req)

    def _make_handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                data = self.rfile.read(length) if length else b""
                parts = urlsplit(self.path)
                query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
                body = json.loads(data) if data else None
                headers = {k.lower(): v for k, v in self.headers.items()}
                req = Recorded(self.command, parts.path, query, headers, body, time.monotonic())
                reply = server._next_reply(req)
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.drop:
                    self.close_connection = True
                    return
                self._write(reply)

            def _write(self, reply: Reply) -> None:
                payload = reply.raw if reply.raw is not None else b""
                if reply.raw is None and reply.status not in (204, 304):
                    payload = json.dumps(reply.body).encode()
                self.send_response(reply.status)
                if reply.raw is None and reply.status not in (204, 304):
                    self.send_header("Content-Type", "application/json")
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PATCH = do_DELETE = do_PUT = _handle

        return _Handler


async def call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call a sync or async SDK method and return its result."""
    result = fn(*args, **kwargs)
    if inspect.isawaitable(result):
        result = await result
    return result


async def collect(pager: Any) -> list[Any]:
    """Drain a SyncPager or AsyncPager."""
    if hasattr(pager, "__aiter__"):
        return [item async for item in pager]
    return list(pager)


async def close(client: Any) -> None:
    """Close a sync or async client."""
    await call(client.close)


def iso(ts: str = "2025-01-01T00:00:00Z") -> str:
    return ts


def anima_json(anima_id: str, name: str = "agent") -> dict[str, Any]:
    return {"id": anima_id, "name": name, "description": None, "meta": {}, "user_id": None,
            "created_at": iso(), "updated_at": iso()}  # fmt: skip


def event_json(event_id: str, anima_id: str, content: str = "hi", **extra: Any) -> dict[str, Any]:
    return {"id": event_id, "anima_id": anima_id, "event_type": "message.in", "content": content,
            "occurred_at": iso(), "meta": {}, "created_at": iso(), "updated_at": iso(), **extra}  # fmt: skip


def pack_json(pack_id: str, anima_id: str, context: str = "## Memory\n- hello") -> dict[str, Any]:
    """A pack with every docs/design.md §6 field, plus an unknown one at each level."""
    mem = {"id": "00000000-0000-4000-8000-000000000011", "summary": "met the user", "score": 0.8,
           "reason": "recent", "breakdown": {"importance": 0.5, "confidence": 0.5, "recency": 0.9,
           "decay": 0.1, "relevance": 0.0, "future_factor": 1}, "similarity": None,
           "time_start": iso(), "provenance": ["00000000-0000-4000-8000-000000000021"], "novel": True}  # fmt: skip
    know = {"id": "00000000-0000-4000-8000-000000000031", "content": "user likes tea", "type": "FACT",
            "knowledge_type": "FACT", "topic": "drinks", "score": 0.7, "similarity": 0.2,
            "provenance": ["00000000-0000-4000-8000-000000000011"]}  # fmt: skip
    content = {
        "context": context,
        "identity": {
            "name": "agent",
            "personality_type": "INTJ",
            "communication_style": "terse",
            "self_reflection": {"values": ["care"]},
            "prose": "I help.",
        },  # fmt: skip
        "session_memories": [mem],
        "long_term_memories": [mem],
        "knowledge": [know],
        "temporal_context": {
            "last_event_at": iso(),
            "hours_ago": 3.0,
            "memory_summary": None,
            "formatted": "3 hours since last interaction",
        },  # fmt: skip
        "new_layer": {"x": 1},
    }
    return {"id": pack_id, "anima_id": anima_id, "query": None, "preset_name": "conversational",
            "session_memory_count": 1, "knowledge_count": 1, "long_term_memory_count": 1,
            "has_identity": True, "token_count": 42, "max_tokens": 4000, "compiled_at": iso(),
            "created_at": iso(), "content": content, "fingerprint": "f" * 64, "encoding": "o200k_base",
            "state_version": 7, "context": context, "server_only": "ok"}  # fmt: skip
