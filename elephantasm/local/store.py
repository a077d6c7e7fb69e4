"""The content-addressed snapshot store: files under ``<root>/<org id>/<sha[:2]>/<sha>.kvs``.

A file's name is the sha256 of its bytes. Writes go to a temp file that is fsynced and renamed,
so a reader never sees half a file; reads check the digest (and the format's own state checksum)
before returning, and a file that fails is deleted so it can never reach the model. One directory
per org: identical bytes of two orgs are still two files (nothing is shared across tenants).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import uuid
from pathlib import Path

from elephantasm.domain.errors import STORAGE_FULL_ERRNOS, StorageFullError
from elephantasm.domain.kv.snapshot import SnapshotFormatError, decode_snapshot


def _raise_if_full(exc: OSError) -> None:
    """A store that cannot take more bytes is a StorageFullError (507); other I/O errors pass."""
    if exc.errno in STORAGE_FULL_ERRNOS:
        reason = os.strerror(exc.errno or 0)
        raise StorageFullError(f"the server's storage is full: the KV snapshot was not stored ({reason})") from exc


class SnapshotStore:
    """Snapshot files of all orgs under one root (a shared volume when several replicas run)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def path(self, org_id: uuid.UUID, digest: str) -> Path:
        if len(digest) != 64 or not all(c in "0123456789abcdef" for c in digest):
            raise ValueError(f"not a sha256 digest: {digest!r}")
        return self.root / str(org_id) / digest[:2] / f"{digest}.kvs"

    def write(self, org_id: uuid.UUID, blob: bytes) -> str:
        """Store ``blob``; returns its sha256 (writing the same bytes twice is a no-op). A store that
        cannot take the bytes raises StorageFullError and keeps no part of them."""
        digest = hashlib.sha256(blob).hexdigest()
        target = self.path(org_id, digest)
        if target.exists():
            return digest
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=".kvs")
        except OSError as exc:
            _raise_if_full(exc)
            raise
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(blob)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, target)
        except BaseException as exc:
            Path(tmp).unlink(missing_ok=True)
            if isinstance(exc, OSError):
                _raise_if_full(exc)
            raise
        return digest

    def read(self, org_id: uuid.UUID, digest: str) -> bytes | None:
        """The verified bytes, or None when missing or corrupt (a corrupt file is deleted).

        Verified = the sha256 of the bytes is ``digest`` and the framing is sound; callers may then
        decode with ``digest_verified=True``."""
        target = self.path(org_id, digest)
        try:
            blob = target.read_bytes()
        except FileNotFoundError:
            return None
        if hashlib.sha256(blob).hexdigest() != digest:
            target.unlink(missing_ok=True)
            return None
        try:
            # The file digest is the whole-file checksum, computed when the file was written from a
            # state whose own checksum was then recorded in its header: one pass suffices here.
            decode_snapshot(blob, digest_verified=True)
        except SnapshotFormatError:
            target.unlink(missing_ok=True)
            return None
        return blob

    def delete(self, org_id: uuid.UUID, digest: str) -> None:
        self.path(org_id, digest).unlink(missing_ok=True)
