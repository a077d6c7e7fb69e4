"""API key generation and keyed hashing. Keys are never stored in clear: only HMAC-SHA256 under the
server secret, so a lookup is one indexed equality (O(1)) and a leaked table cannot be replayed."""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

KEY_PREFIX = "sk_live_"
DISPLAY_PREFIX_LEN = len(KEY_PREFIX) + 6


def generate_api_key() -> str:
    """A new random key: ``sk_live_`` + 43 url-safe characters (256 bits)."""
    return KEY_PREFIX + secrets.token_urlsafe(32)


def hash_api_key(key: str, secret: bytes) -> str:
    """The keyed hash stored for ``key`` (hex)."""
    return hmac.new(secret, key.encode("utf-8"), hashlib.sha256).hexdigest()


def display_prefix(key: str) -> str:
    """The part of a key safe to show in listings."""
    return key[:DISPLAY_PREFIX_LEN]


def looks_like_api_key(key: str) -> bool:
    """Cheap shape check before touching the database."""
    return key.startswith(KEY_PREFIX) and 20 <= len(key) <= 200


def load_or_create_secret(configured: str | None, data_dir: Path) -> bytes:
    """The hashing secret: the configured one, else a random one persisted in ``data_dir``.

    Persisting matters: a new secret would silently invalidate every stored key.
    """
    if configured:
        return configured.encode("utf-8")
    path = Path(data_dir) / "secret.key"
    if path.exists():
        return path.read_bytes().strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    value = secrets.token_hex(32).encode("ascii")
    tmp = path.with_suffix(".tmp")
    write_private(tmp, value)
    tmp.replace(path)
    return value


def write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to a new file that is 0600 from the moment it exists (whatever the umask),
    so there is no window in which another user could open it. An existing file is replaced. All
    of ``data`` reaches the disk, or the file is removed and the OSError raised."""
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.fchmod(fd, 0o600)  # the mode given to open() is still masked by the umask; never widened
        rest = memoryview(data)
        while rest:  # a full disk cuts a write short; the next one raises
            rest = rest[os.write(fd, rest) :]
        os.fsync(fd)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    finally:
        os.close(fd)
