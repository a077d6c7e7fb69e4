"""Text embedders: the built-in offline :class:`HashEmbedder`, an OpenAI-compatible one, and an LRU.

Every embedder returns L2-normalised vectors of exactly ``dim`` floats, so cosine similarity is
a dot product and pgvector's cosine distance behaves the same for all of them. Each names the
:class:`EmbeddingSpace` its vectors live in: vectors of two spaces are never compared. The local
models (WordLlama, MiniLM) are in :mod:`elephantasm.llm.local_embedders`.
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from collections import Counter, OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    import openai

OPENAI_MAX_BATCH = 256
BULK_TEXTS = 256
"""Above this many texts in one call, :class:`CachedEmbedder` leaves its LRU alone (bulk work, not queries)."""
DEFAULT_DIM = 384
"""Width of the hash embedder and of the OpenAI-compatible one unless configured otherwise
(``ELEPHANTASM_EMBEDDING_DIMENSIONS``)."""


class EmbeddingError(RuntimeError):
    """An embedding backend returned something unusable (wrong width, count, or values)."""


@dataclass(frozen=True, slots=True)
class EmbeddingSpace:
    """What made a vector: model name, its own dimension and version. Two spaces never mix."""

    name: str
    dim: int
    version: str

    def label(self) -> str:
        """``name/dim/version`` for logs, health and the CLI."""
        return f"{self.name}/{self.dim}/{self.version}"


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into unit vectors of width ``dim``, all in one ``space``.

    ``dim`` is the model's own width (``space.dim``): vectors are stored as they come.
    """

    name: str
    dim: int
    space: EmbeddingSpace

    async def embed(self, texts: list[str]) -> list[list[float]]:
        """One unit vector per text, in input order."""
        ...


def load_model(embedder: object) -> None:
    """Load now the model that ``embedder`` (or a backend it wraps) would load on its first call:
    an API process does at startup, so no request waits for it and a broken model stops the start."""
    while embedder is not None:
        load = getattr(embedder, "load", None)
        if callable(load):
            load()
            return
        embedder = getattr(embedder, "inner", None)


def l2_normalise(vec: list[float]) -> list[float]:
    """``vec / ‖vec‖``; a zero vector is returned unchanged."""
    norm = math.sqrt(math.fsum(x * x for x in vec))
    return [x / norm for x in vec] if norm > 0 else list(vec)


_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
# Frequent function words carry little meaning; down-weighted rather than dropped so that a
# text made only of them still embeds to something.
_STOPWORDS = frozenset(
    "a an and are as at be but by do for from has have i in is it me my of on or so that the "
    "this to was we were with you your".split()
)
_SUFFIXES = ("ingly", "edly", "ings", "ing", "ies", "ied", "ed", "es", "ly", "s")
_W_UNIGRAM, _W_BIGRAM, _W_CHARGRAM, _W_STOP = 1.0, 0.6, 0.25, 0.2
_EMPTY_FEATURE = "\x00empty"


def _stem(word: str) -> str:
    """Crude suffix stripping so 'preferences'/'preference'/'prefers' share a stem."""
    for suf in _SUFFIXES:
        if len(word) - len(suf) >= 3 and word.endswith(suf):
            stem = word[: -len(suf)]
            return stem + "y" if suf in ("ies", "ied") else stem
    return word


def _words(text: str) -> list[str]:
    return _TOKEN.findall(unicodedata.normalize("NFKC", text).casefold())


@lru_cache(maxsize=1 << 16)
def _slot(feature: str, dim: int) -> tuple[int, float]:
    # blake2b, not hash(): Python's string hash is salted per process.
    h = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")
    return h % dim, (1.0 if (h >> 63) & 1 else -1.0)


def _features(text: str) -> Counter[str]:
    words = _words(text)
    feats: Counter[str] = Counter()
    stems = [_stem(w) for w in words]
    for word, stem in zip(words, stems, strict=True):
        feats["w:" + stem] += 1
        padded = f" {word} "
        for n in (3, 4):
            for i in range(len(padded) - n + 1):
                feats[f"c{n}:" + padded[i : i + n]] += 1
    for a, b in pairwise(stems):
        feats[f"b:{a} {b}"] += 1
    if not feats:
        feats[_EMPTY_FEATURE] = 1
    return feats


def _weight(feature: str) -> float:
    kind, _, body = feature.partition(":")
    if kind == "w":
        return _W_STOP if body in _STOPWORDS else _W_UNIGRAM
    if kind == "b":
        return _W_BIGRAM
    return _W_CHARGRAM


class HashEmbedder:
    """Deterministic, download-free embedder (fast; for tests and as an explicit choice).

    Signed feature hashing of stemmed word unigrams and bigrams plus character 3/4-grams of
    each lower-cased word, sublinear tf (1 + ln tf), L2-normalised. Texts sharing words score a
    clearly higher cosine; identical input gives identical output on any machine.
    """

    in_process = True  # CPU work in this process, no network (see dreams.runner.in_process)

    def __init__(self, dim: int = DEFAULT_DIM) -> None:
        if dim <= 0:
            raise ValueError("dim must be > 0")
        self.dim = dim
        self.name = f"hash-v1:{dim}"
        self.space = EmbeddingSpace("hash-v1", dim, "1")

    def embed_one(self, text: str) -> list[float]:
        """Embed a single text synchronously."""
        vec = [0.0] * self.dim
        for feature, tf in _features(text).items():
            idx, sign = _slot(feature, self.dim)
            vec[idx] += sign * _weight(feature) * (1.0 + math.log(tf))
        out = l2_normalise(vec)
        # Colliding features can cancel exactly; never hand pgvector a zero vector.
        return out if any(out) else l2_normalise([1.0] * self.dim)

    async def embed(self, texts: list[str]) -> list[list[float]]:
        """Embed texts (CPU-bound but fast)."""
        return [self.embed_one(t) for t in texts]


class OpenAIEmbedder:
    """Embeddings from any OpenAI-compatible ``/v1/embeddings`` endpoint.

    Sends ``dimensions=dim`` and batches of at most :data:`OPENAI_MAX_BATCH` inputs; validates
    the count and width of what comes back and L2-normalises it.
    """

    def __init__(self, client: openai.AsyncOpenAI, model: str, dim: int = DEFAULT_DIM) -> None:
        if dim <= 0:
            raise ValueError("dim must be > 0")
        self.client = client
        self.model = model
        self.dim = dim
        self.name = f"openai:{model}:{dim}"
        self.space = EmbeddingSpace(f"openai:{model}", dim, "1")

    async def _embed_batch(self, batch: list[str]) -> list[list[float]]:
        # The API rejects empty strings; a single space embeds to "nothing" just as well.
        inputs = [t if t.strip() else " " for t in batch]
        resp = await self.client.embeddings.create(model=self.model, input=inputs, dimensions=self.dim)
        data = sorted(resp.data, key=lambda d: d.index)
        if len(data) != len(batch):
            raise EmbeddingError(f"{self.name}: asked for {len(batch)} embeddings, got {len(data)}")
        out: list[list[float]] = []
        for d in data:
            vec = [float(x) for x in d.embedding]
            if len(vec) != self.dim:
                raise EmbeddingError(f"{self.name}: expected {self.dim} dimensions, got {len(vec)}")
            if not all(math.isfinite(x) for x in vec):
                raise EmbeddingError(f"{self.name}: non-finite values in embedding")
            out.append(l2_normalise(vec))
        return out

    async def embed(self, texts: list[str]) -> list[list[float]]:
        """Embed texts in order, one request per batch of up to 256."""
        out: list[list[float]] = []
        for start in range(0, len(texts), OPENAI_MAX_BATCH):
            out.extend(await self._embed_batch(texts[start : start + OPENAI_MAX_BATCH]))
        return out


class CachedEmbedder:
    """LRU cache in front of another embedder (for query embeddings on the hot inject path).

    Vectors are kept as float64 rows (exactly the floats ``inner`` returned): a pack compile reads
    its pending events' vectors as one matrix (:meth:`embed_array`) without building lists.
    """

    def __init__(self, inner: Embedder, max_entries: int = 4096) -> None:
        if max_entries <= 0:
            raise ValueError("max_entries must be > 0")
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.in_process: bool = getattr(inner, "in_process", False)
        # An embedder written before spaces existed is its own space, named after it.
        self.space = getattr(inner, "space", None) or EmbeddingSpace(inner.name, inner.dim, "unversioned")
        self.max_entries = max_entries
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()

    async def embed(self, texts: list[str]) -> list[list[float]]:
        """Embed, asking ``inner`` only for texts not cached (each distinct text once).

        A call of more than :data:`BULK_TEXTS` texts (a dream chunk, a re-embedding batch) goes
        straight to ``inner``: its texts will not come again as queries, and caching them would
        evict the queries."""
        if len(texts) > BULK_TEXTS:
            return await self._inner_embed(texts)
        return [row.tolist() for row in await self._rows(texts)]

    async def embed_array(self, texts: list[str]) -> np.ndarray:
        """:meth:`embed` as a ``len(texts) × dim`` float64 array (same values)."""
        rows = await self._rows(texts)
        return np.stack(rows) if rows else np.empty((0, self.dim), dtype=np.float64)

    async def _rows(self, texts: list[str]) -> list[np.ndarray]:
        vectors = {t: self._cache[t] for t in texts if t in self._cache}
        missing = [t for t in dict.fromkeys(texts) if t not in vectors]
        if missing:
            fresh = await self._inner_embed(missing)
            vectors.update((t, _row(v)) for t, v in zip(missing, fresh, strict=True))
        for t in dict.fromkeys(texts):
            self._put(t, vectors[t])
        return [vectors[t] for t in texts]

    async def _inner_embed(self, texts: list[str]) -> list[list[float]]:
        fresh = await self.inner.embed(texts)
        if len(fresh) != len(texts):
            raise EmbeddingError(f"{self.name}: asked for {len(texts)} embeddings, got {len(fresh)}")
        return fresh

    def _put(self, text: str, vec: np.ndarray) -> None:
        self._cache[text] = vec
        self._cache.move_to_end(text)
        while len(self._cache) > self.max_entries:
            self._cache.popitem(last=False)


def _row(vector: list[float]) -> np.ndarray:
    """A cached vector: float64 (every Python float exactly), read-only (rows are shared)."""
    row = np.array(vector, dtype=np.float64)
    row.flags.writeable = False
    return row
