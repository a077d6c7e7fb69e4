"""A real OpenAI-compatible HTTP server for tests, on 127.0.0.1 in a background thread.

It serves ``POST /v1/chat/completions`` and ``POST /v1/embeddings`` (float and base64 encodings).
Chat replies follow a script: a queue of behaviours (a generated reply, malformed or empty JSON,
an HTTP error, a 429 with ``Retry-After``, a reply slower than the client's timeout); once the
queue is empty the default behaviour answers. Every request is recorded with its arrival time.

The default reply generator reads the numbered events (``[index] ... | speaker (type): text``) in
the prompt and returns valid structured JSON citing those indices, so the LLM engine can be tested
end to end without a model.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import math
import re
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import uvicorn

Generator = Callable[[dict[str, Any]], "dict[str, Any] | str"]
_EVENT_LINE = re.compile(r"^\[(\d+)\] \S+ \| session (\S+) \| (.+?) \(([\w.]+)\): (.*)$", re.M)
_FACTS = (
    (re.compile(r"\bI (?:live in|moved to) ([A-Z]\w+)"), "user.home_city", "User lives in {}."),
    (re.compile(r"\bmy favou?rite colou?r is (\w+)", re.I), "user.favorite_color", "User's favorite color is {}."),
)


def distill_reply(body: dict[str, Any], *, skip: frozenset[int] = frozenset(), group_size: int = 4) -> dict[str, Any]:
    """A deterministic, schema-valid reply for the distiller's prompt (skipping ``skip`` indices)."""
    prompt = body["messages"][-1]["content"]
    events = [(int(i), session, who, text) for i, session, who, _type, text in _EVENT_LINE.findall(prompt)]
    memories, knowledge = [], []
    kept = [e for e in events if e[0] not in skip]
    for start in range(0, len(kept), group_size):
        chunk = kept[start : start + group_size]
        memories.append(
            {
                "summary": f"{chunk[0][2]}: {chunk[0][3][:80]}",
                "content": " ".join(f"{who}: {text}" for _, _, who, text in chunk),
                "importance": 0.5,
                "confidence": 0.8,
                "event_indices": [i for i, *_ in chunk],
            }
        )
    for index, _session, _who, text in kept:
        for pattern, key, template in _FACTS:
            if m := pattern.search(text):
                knowledge.append(
                    {
                        "type": "FACT",
                        "topic": "user",
                        "subject_key": key,
                        "value": m.group(1),
                        "content": template.format(m.group(1)),
                        "confidence": 0.9,
                        "importance": 0.7,
                        "event_indices": [index],
                    }
                )
    reply: dict[str, Any] = {"memories": memories, "knowledge": knowledge}
    if "identity" in body.get("response_format", {}).get("json_schema", {}).get("schema", {}).get("properties", {}):
        reply["identity"] = {
            "personality_type": "Helpful Guide",
            "communication_style": "warm, concise",
            "self_reflection": f"I have talked through {len(events)} more events.",
            "traits": ["warm", "concise"],
            "prose": "I help with warmth and brevity.",
            "reason": "distilled a new batch of conversations",
        }
    return reply


@dataclass
class Reply:
    """Answer 200 with a chat completion whose content is ``generator(body)`` (JSON-encoded)."""

    generator: Generator = distill_reply
    delay: float = 0.0


@dataclass
class RawContent:
    """Answer 200 with exactly this message content (e.g. malformed JSON, or empty)."""

    content: str | None
    finish_reason: str = "stop"


@dataclass
class Status:
    """Answer with an HTTP error status, optional headers and an OpenAI-style error body."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    message: str = "scripted failure"


def malformed() -> RawContent:
    """A reply that is not JSON at all."""
    return RawContent('{"memories": [ this is not json')


def empty() -> RawContent:
    """A reply with empty content."""
    return RawContent("")


def rate_limited(retry_after: float = 1.0) -> Status:
    """A 429 asking the client to wait ``retry_after`` seconds."""
    return Status(429, {"retry-after": f"{retry_after:g}"}, "rate limited")


def slow(seconds: float) -> Reply:
    """A valid reply that arrives after ``seconds`` (longer than the client's timeout)."""
    return Reply(delay=seconds)


@dataclass(frozen=True)
class RecordedRequest:
    """One request as received."""

    path: str
    body: dict[str, Any]
    headers: dict[str, str]
    received_at: float


def fake_embedding(text: str, dimensions: int) -> list[float]:
    """A deterministic unit vector for ``text``."""
    raw, counter = b"", 0
    while len(raw) < dimensions * 4:
        raw += hashlib.sha256(f"{counter}:{text}".encode()).digest()
        counter += 1
    values = [(b / 255.0) - 0.5 for b in raw[:dimensions]]
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return [v / norm for v in values]


class OpenAIServer:
    """The server: ``start()``, ``script(...)`` behaviours, inspect ``requests``, ``stop()``."""

    def __init__(self, embedding_dimensions: int = 384) -> None:
        self.embedding_dimensions = embedding_dimensions
        self.default: Reply | RawContent | Status = Reply()
        self._queue: deque[Reply | RawContent | Status] = deque()
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # -- control ------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        """The ``base_url`` to give an OpenAI client (ends in ``/v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def script(self, *behaviours: Reply | RawContent | Status) -> None:
        """Queue behaviours for the next chat requests, in order."""
        with self._lock:
            self._queue.extend(behaviours)

    def reset(self) -> None:
        """Forget queued behaviours and recorded requests; restore the default reply."""
        with self._lock:
            self._queue.clear()
            self._requests.clear()
            self.default = Reply()

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far."""
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        """The chat completion requests received so far."""
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def start(self) -> OpenAIServer:
        """Bind a free loopback port and serve in a daemon thread; returns once accepting."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self._app, interface="asgi3", log_level="warning", lifespan="off", timeout_graceful_shutdown=1
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("test OpenAI server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        """Stop serving and join the thread."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)

    # -- ASGI ---------------------------------------------------------------------------
    async def _app(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            return
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        try:
            body = json.loads(b"".join(chunks) or b"{}")
        except ValueError:
            body = {}
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", [])}
        path = scope["path"]
        is_chat = path.endswith("/chat/completions")
        with self._lock:
            self._requests.append(RecordedRequest(path, body, headers, time.monotonic()))
            behaviour = (self._queue.popleft() if self._queue else self.default) if is_chat else None
        if scope["method"] != "POST":
            await _send_json(send, 405, {"error": {"message": "method not allowed"}})
        elif is_chat:
            await self._chat(send, body, behaviour)  # type: ignore[arg-type]
        elif path.endswith("/embeddings"):
            await _send_json(send, 200, self._embeddings(body))
        else:
            await _send_json(send, 404, {"error": {"message": f"no route {path}"}})

    async def _chat(self, send: Callable, body: dict, behaviour: Reply | RawContent | Status) -> None:
        if isinstance(behaviour, Status):
            error = {"error": {"message": behaviour.message, "type": "scripted", "code": str(behaviour.status)}}
            await _send_json(send, behaviour.status, error, behaviour.headers)
            return
        if isinstance(behaviour, Reply):
            if behaviour.delay:
                await asyncio.sleep(behaviour.delay)
            produced = behaviour.generator(body)
            content: str | None = produced if isinstance(produced, str) else json.dumps(produced)
            finish = "stop"
        else:
            content, finish = behaviour.content, behaviour.finish_reason
        prompt_chars = sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
        usage = {"prompt_tokens": prompt_chars // 4 + 1, "completion_tokens": len(content or "") // 4 + 1}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        await _send_json(
            send,
            200,
            {
                "id": f"chatcmpl-{len(self._requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "test-model"),
                "choices": [
                    {"index": 0, "finish_reason": finish, "message": {"role": "assistant", "content": content}}
                ],
                "usage": usage,
            },
        )

    def _embeddings(self, body: dict) -> dict:
        inputs = body.get("input", [])
        texts = [inputs] if isinstance(inputs, str) else [str(x) for x in inputs]
        dims = int(body.get("dimensions") or self.embedding_dimensions)
        as_base64 = body.get("encoding_format") == "base64"
        data = []
        for i, text in enumerate(texts):
            vector = fake_embedding(text, dims)
            encoded: Any = base64.b64encode(struct.pack(f"<{dims}f", *vector)).decode() if as_base64 else vector
            data.append({"object": "embedding", "index": i, "embedding": encoded})
        tokens = sum(len(t) // 4 + 1 for t in texts)
        return {
            "object": "list",
            "data": data,
            "model": body.get("model", "test-embedding"),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }


async def _send_json(send: Callable, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
    raw = json.dumps(payload).encode()
    head = [(b"content-type", b"application/json"), (b"content-length", str(len(raw)).encode())]
    head += [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": raw})
