"""Local semantic embedders: load offline from installed files, give real semantic similarity, and a
missing optional piece fails at startup with the install step that brings it."""

from __future__ import annotations

import importlib.util
import math
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from elephantasm.llm.embedders import Embedder
from elephantasm.llm.factory import build_embedder
from elephantasm.llm.local_embedders import (
    MiniLMEmbedder,
    MissingExtraError,
    WordLlamaEmbedder,
    minilm_tokenizer_path,
)
from elephantasm.settings import Settings

PARAPHRASE = ("Where does the user live now?", "The user relocated to Lisbon last spring.")
UNRELATED = ("Where does the user live now?", "We compared three sourdough recipes.")


def _cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to open a connection fails the test (a download would have to)."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"network access attempted: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


async def test_wordllama_loads_offline_and_ranks_a_paraphrase_above_an_unrelated_text(no_network: None) -> None:
    emb = WordLlamaEmbedder()
    assert isinstance(emb, Embedder)
    assert emb.dim == emb.space.dim == 256 and emb.space.name == "wordllama:l2_supercat"
    q, para, other = await emb.embed([PARAPHRASE[0], PARAPHRASE[1], UNRELATED[1]])
    assert _cos(q, para) > _cos(q, other) + 0.1
    assert all(math.isclose(math.fsum(x * x for x in v), 1.0, abs_tol=1e-5) for v in (q, para, other))
    assert len(q) == 256  # stored at the model's own width, never padded


async def test_wordllama_is_deterministic_and_batches_keep_order() -> None:
    emb = WordLlamaEmbedder()
    texts = [f"note number {i} about tea" for i in range(40)] + ["", "   "]
    big = await emb.embed(texts)  # above the inline limit: runs in a worker thread
    assert len(big) == len(texts)
    assert big[:3] == await emb.embed(texts[:3])
    assert await emb.embed([]) == []


def test_the_default_embedder_is_wordllama_behind_the_query_cache() -> None:
    emb = build_embedder(Settings())
    assert emb.space.name == "wordllama:l2_supercat" and emb.dim == 256


LOADED_PROBE = """
import asyncio, sys
from elephantasm.llm.embedders import load_model
from elephantasm.llm.factory import build_embedder
from elephantasm.settings import Settings
lazy, warm = build_embedder(Settings()), build_embedder(Settings())
print("wordllama" in sys.modules, lazy.space.label() == warm.space.label())
load_model(warm)
print("wordllama" in sys.modules, asyncio.run(lazy.embed(["tea"])) == asyncio.run(warm.embed(["tea"])))
"""


def test_the_model_loads_on_first_use_or_when_asked_never_at_build() -> None:
    """A process that never embeds (most CLI commands) never imports the model; ``load_model`` (an API
    process at startup) loads it through the query cache, and both ways embed alike."""
    done = subprocess.run([sys.executable, "-c", LOADED_PROBE], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.split("\n")[:2] == ["False True", "True True"]


def test_unknown_embedder_names_the_choices() -> None:
    with pytest.raises(ValueError, match="wordllama, minilm, hash, openai"):
        build_embedder(Settings(embedder="bert"))


def test_minilm_without_its_tokenizer_file_fails_at_startup_naming_the_setting(tmp_path: Path) -> None:
    with pytest.raises(MissingExtraError, match="ELEPHANTASM_MINILM_TOKENIZER") as err:
        build_embedder(Settings(embedder="minilm", data_dir=tmp_path, minilm_tokenizer=None))
    assert str(tmp_path / "models" / "minilm" / "tokenizer.json") in str(err.value)
    given = tmp_path / "tok.json"
    with pytest.raises(MissingExtraError, match=str(given)):
        minilm_tokenizer_path(given, tmp_path)


def _minilm_tokenizer() -> Path | None:
    settings = Settings()
    try:
        return minilm_tokenizer_path(settings.minilm_tokenizer, settings.data_dir)
    except MissingExtraError:
        return None


@pytest.mark.skipif(
    importlib.util.find_spec("onnxruntime") is None or _minilm_tokenizer() is None,
    reason="MiniLM extra or its tokenizer.json not installed (optional: README 'Embedders')",
)
async def test_minilm_ranks_a_paraphrase_above_an_unrelated_text(no_network: None) -> None:
    tokenizer = _minilm_tokenizer()
    assert tokenizer is not None
    emb = MiniLMEmbedder(tokenizer)
    q, para, other = await emb.embed([PARAPHRASE[0], PARAPHRASE[1], UNRELATED[1]])
    assert emb.space.dim == emb.dim == 384 and len(q) == 384
    assert _cos(q, para) > _cos(q, other) + 0.1
