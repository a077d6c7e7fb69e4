"""Embedders: the offline HashEmbedder, OpenAIEmbedder against a real local HTTP server, the LRU."""

from __future__ import annotations

import base64
import json
import math
import subprocess
import sys
import threading
from array import array
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import openai
import pytest

from elephantasm.llm.embedders import BULK_TEXTS, CachedEmbedder, Embedder, EmbeddingError, HashEmbedder, OpenAIEmbedder


def cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def norm(a: list[float]) -> float:
    return math.sqrt(sum(x * x for x in a))


# ---------------------------------------------------------------- HashEmbedder --------------


def test_hash_embedder_shape_norm_and_protocol() -> None:
    emb = HashEmbedder()
    assert isinstance(emb, Embedder)
    assert emb.dim == emb.space.dim == 384  # its width since before vectors kept their own
    for text in ["I love coffee", "", "   ", "数据 🙂", "a" * 10_000]:
        vec = emb.embed_one(text)
        assert len(vec) == 384
        assert norm(vec) == pytest.approx(1.0)
    assert len(HashEmbedder(dim=64).embed_one("x")) == 64


async def test_hash_embedder_is_deterministic_and_async_matches_sync() -> None:
    texts = ["The user prefers oat milk.", "Meeting moved to Friday"]
    a = await HashEmbedder().embed(texts)
    b = await HashEmbedder().embed(texts)
    assert a == b == [HashEmbedder().embed_one(t) for t in texts]


def test_hash_embedder_is_stable_across_processes() -> None:
    # A different PYTHONHASHSEED would change hash(); blake2b must not care.
    code = "from elephantasm.llm.embedders import HashEmbedder; print(repr(HashEmbedder().embed_one('Coffee at 9am')))"
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).resolve().parents[1],
            env={"PATH": "/usr/bin:/bin", "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outs) == 1
    assert eval(outs.pop()) == HashEmbedder().embed_one("Coffee at 9am")


@pytest.mark.parametrize(
    ("anchor", "similar", "unrelated"),
    [
        ("coffee", "Coffee!", "quarterly tax filing"),
        ("I drink coffee every morning", "coffee in the morning", "the stock market crashed"),
        ("User is allergic to peanuts", "peanut allergy", "prefers dark mode in the editor"),
        ("She prefers tea", "her preferences: tea", "deploy the kubernetes cluster"),
    ],
)
def test_hash_embedder_similar_texts_are_closer(anchor: str, similar: str, unrelated: str) -> None:
    emb = HashEmbedder()
    a, s, u = emb.embed_one(anchor), emb.embed_one(similar), emb.embed_one(unrelated)
    assert cos(a, s) > 0.3
    assert cos(a, s) > cos(a, u) + 0.2


def test_hash_embedder_case_and_punctuation_insensitive() -> None:
    emb = HashEmbedder()
    assert emb.embed_one("coffee") == emb.embed_one("Coffee!") == emb.embed_one("  COFFEE.  ")


# ---------------------------------------------------------------- OpenAI-compatible server ---


class _EmbeddingsHandler(BaseHTTPRequestHandler):
    """A tiny OpenAI-compatible ``/v1/embeddings`` endpoint (float and base64 encodings)."""

    requests: list[dict[str, Any]]

    def log_message(self, *args: Any) -> None:  # keep test output quiet
        pass

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        if self.path != "/v1/embeddings":
            return self._send(404, {"error": {"message": "not found"}})
        if self.headers.get("Authorization") != "Bearer test-key":
            return self._send(401, {"error": {"message": "bad key"}})
        req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(req)  # type: ignore[attr-defined]
        inputs = req["input"]
        if any(not t for t in inputs):
            return self._send(400, {"error": {"message": "input cannot be an empty string"}})
        dim = req.get("dimensions", 8) + (1 if req["model"] == "wrong-dim" else 0)
        if req["model"] == "too-few":
            inputs = inputs[:-1]
        data = []
        for i, text in enumerate(inputs):
            # Deliberately not unit length: the client side must normalise.
            vec = [3.0 * x for x in HashEmbedder(dim).embed_one(text)]
            if req.get("encoding_format") == "base64":
                emb: Any = base64.b64encode(array("f", vec).tobytes()).decode()
            else:
                emb = vec
            data.append({"object": "embedding", "index": i, "embedding": emb})
        data.reverse()  # out of order on purpose; clients must sort by index
        self._send(
            200,
            {"object": "list", "data": data, "model": req["model"], "usage": {"prompt_tokens": 1, "total_tokens": 1}},
        )


@pytest.fixture(scope="module")
def server() -> Iterator[ThreadingHTTPServer]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _EmbeddingsHandler)
    srv.requests = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()
    thread.join(timeout=5)


def _client(srv: ThreadingHTTPServer) -> openai.AsyncOpenAI:
    host, port = srv.server_address[:2]
    return openai.AsyncOpenAI(base_url=f"http://{host}:{port}/v1", api_key="test-key", max_retries=0)


async def test_openai_embedder_batches_normalises_and_keeps_order(server: ThreadingHTTPServer) -> None:
    server.requests.clear()  # type: ignore[attr-defined]
    emb = OpenAIEmbedder(_client(server), model="text-embedding-3-small", dim=384)
    texts = [f"memory number {i}" for i in range(600)] + [""]
    vecs = await emb.embed(texts)
    reqs = server.requests  # type: ignore[attr-defined]
    assert [len(r["input"]) for r in reqs] == [256, 256, 89]
    assert all(r["dimensions"] == 384 and r["model"] == "text-embedding-3-small" for r in reqs)
    assert all(r["encoding_format"] == "base64" for r in reqs)  # the openai client's default
    assert reqs[-1]["input"][-1] == " "  # empty strings are never sent
    assert len(vecs) == 601 and all(len(v) == 384 for v in vecs)
    assert all(norm(v) == pytest.approx(1.0, abs=1e-6) for v in vecs)
    expected = HashEmbedder(384).embed_one("memory number 417")
    assert cos(vecs[417], expected) == pytest.approx(1.0, abs=1e-5)
    assert emb.name == "openai:text-embedding-3-small:384"
    assert await emb.embed([]) == []


async def test_openai_embedder_rejects_wrong_dimensions(server: ThreadingHTTPServer) -> None:
    with pytest.raises(EmbeddingError, match="expected 16 dimensions, got 17"):
        await OpenAIEmbedder(_client(server), model="wrong-dim", dim=16).embed(["x"])


async def test_openai_embedder_rejects_missing_embeddings(server: ThreadingHTTPServer) -> None:
    with pytest.raises(EmbeddingError, match="asked for 2"):
        await OpenAIEmbedder(_client(server), model="too-few", dim=16).embed(["x", "y"])


async def test_openai_embedder_surfaces_http_errors(server: ThreadingHTTPServer) -> None:
    host, port = server.server_address[:2]
    bad = openai.AsyncOpenAI(base_url=f"http://{host}:{port}/v1", api_key="wrong", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        await OpenAIEmbedder(bad, model="m", dim=8).embed(["x"])


# ---------------------------------------------------------------- CachedEmbedder ------------


class _CountingEmbedder:
    def __init__(self) -> None:
        self.inner = HashEmbedder(16)
        self.name, self.dim = "counting", 16
        self.calls: list[list[str]] = []

    async def embed(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return await self.inner.embed(texts)


async def test_cached_embedder_lru() -> None:
    inner = _CountingEmbedder()
    cached = CachedEmbedder(inner, max_entries=2)
    assert (cached.name, cached.dim) == ("counting", 16)
    first = await cached.embed(["a", "b", "a"])
    assert inner.calls == [["a", "b"]]  # each distinct text once
    assert first[0] == first[2] == HashEmbedder(16).embed_one("a")
    first[0][0] = 99.0  # callers mutating results must not corrupt the cache
    assert (await cached.embed(["a"]))[0] == HashEmbedder(16).embed_one("a")
    assert inner.calls == [["a", "b"]]
    await cached.embed(["c"])  # evicts "b" (least recently used), keeps "a"
    await cached.embed(["a", "b"])
    assert inner.calls[-1] == ["b"]
    # A batch larger than the cache still returns every vector.
    big = await cached.embed(["p", "q", "r", "p"])
    assert big[0] == big[3] and len(big) == 4


async def test_cached_embedder_array_holds_the_same_floats() -> None:
    inner = _CountingEmbedder()
    cached = CachedEmbedder(inner, max_entries=8)
    lists = await cached.embed(["a", "b"])
    matrix = await cached.embed_array(["b", "c", "a"])
    assert matrix.shape == (3, 16) and matrix.dtype.name == "float64"
    assert matrix.tolist() == [lists[1], HashEmbedder(16).embed_one("c"), lists[0]]  # exact, in request order
    assert inner.calls == [["a", "b"], ["c"]]  # served from the cache where it could be
    matrix[0, 0] = 99.0  # callers mutating the matrix must not corrupt the cache
    assert (await cached.embed(["b"]))[0] == lists[1]
    assert (await cached.embed_array([])).shape == (0, 16)


async def test_bulk_calls_bypass_the_query_cache() -> None:
    """A dream chunk's or re-embedding batch's texts neither fill nor evict the query LRU."""
    inner = _CountingEmbedder()
    cached = CachedEmbedder(inner, max_entries=8)
    await cached.embed(["query"])
    bulk = [f"memory {i}" for i in range(BULK_TEXTS + 1)]
    out = await cached.embed(bulk)
    assert out == [HashEmbedder(16).embed_one(t) for t in bulk] and inner.calls[-1] == bulk
    assert (await cached.embed(["query"]))[0] == HashEmbedder(16).embed_one("query")
    assert len(inner.calls) == 2  # the query was still cached
    await cached.embed(bulk[:3])  # a small call: cached as usual
    await cached.embed(bulk[:3])
    assert len(inner.calls) == 3
