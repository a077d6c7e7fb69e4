"""KV snapshot keys and the on-disk snapshot format.

A snapshot file is ``MAGIC | u32 big-endian length | canonical JSON metadata | raw KV state``.
The store names a file by the sha256 of all of its bytes (content addressing), and that digest is
checked before the bytes are ever handed to the model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from elephantasm.domain.fingerprint import canonical_json, sha256_hex
from elephantasm.domain.kv.framing import frame, unframe

MAGIC = b"EKVSNAP1"
SNAPSHOT_FORMAT = 1


class SnapshotFormatError(ValueError):
    """Bytes that are not a well-formed snapshot (wrong magic, truncated, bad metadata)."""


def snapshot_key(model_digest: str, template: str, prefix_text: str, kv_type: str) -> str:
    """The identity of a prefix's KV state: model file, chat template, the exact prefix, KV type.

    The prefix text is the system prompt plus the pack's ``as_prompt()`` under the template, so it
    is a function of the pack fingerprint: a new pack is a new key and a snapshot is never stale.
    (Two fingerprints that render the same text share one key, which is safe: same text, same
    tokens, same KV.)
    """
    payload = {
        "v": SNAPSHOT_FORMAT,
        "model": model_digest,
        "template_sha256": sha256_hex(template),
        "prefix_sha256": sha256_hex(prefix_text),
        "kv_type": kv_type,
    }
    return sha256_hex(canonical_json(payload))


def token_ids_hash(tokens: Sequence[int]) -> str:
    """sha256 over the token ids (little-endian u32 each): what the KV state encodes."""
    return sha256_hex(b"".join(int(t).to_bytes(4, "little") for t in tokens))


def encode_snapshot(meta: dict[str, Any], state: bytes) -> bytes:
    """One snapshot file's bytes (metadata records the state's own sha256 and size)."""
    full = {**meta, "format": SNAPSHOT_FORMAT, "state_sha256": sha256_hex(state), "state_bytes": len(state)}
    return frame(MAGIC, full, state)


def decode_snapshot(blob: bytes, *, digest_verified: bool = False) -> tuple[dict[str, Any], bytes]:
    """(metadata, state) of a snapshot file; raises :class:`SnapshotFormatError` if malformed.

    ``digest_verified``: the caller has just checked the sha256 of the whole file against the name
    it was stored under (the content-addressed store does), which covers the state's bytes too, so
    the state checksum is not computed a second time (a pass over ~22 MiB per 1k tokens).
    """
    meta, state = unframe(blob, MAGIC, SnapshotFormatError, "a KV snapshot")
    if meta.get("state_bytes") != len(state):
        raise SnapshotFormatError("snapshot truncated (state size mismatch)")
    if not digest_verified and meta.get("state_sha256") != sha256_hex(state):
        raise SnapshotFormatError("snapshot state checksum mismatch")
    return meta, state
