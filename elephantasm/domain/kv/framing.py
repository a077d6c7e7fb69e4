"""The framing shared by snapshot files and packages: ``MAGIC | u32 big-endian n | n bytes of JSON | body``."""

from __future__ import annotations

import json
import struct
from typing import Any

from elephantasm.domain.fingerprint import canonical_json

_LEN = struct.Struct(">I")


def frame(magic: bytes, head: dict[str, Any], body: bytes) -> bytes:
    """The framed bytes (the head as canonical JSON)."""
    encoded = canonical_json(head).encode()
    return magic + _LEN.pack(len(encoded)) + encoded + body


def unframe(blob: bytes, magic: bytes, error: type[ValueError], what: str) -> tuple[dict[str, Any], bytes]:
    """(head, body) of framed bytes; raises ``error`` naming ``what`` when they are malformed."""
    if not blob.startswith(magic) or len(blob) < len(magic) + _LEN.size:
        raise error(f"not {what} (bad magic)")
    (n,) = _LEN.unpack_from(blob, len(magic))
    start = len(magic) + _LEN.size
    try:
        head = json.loads(blob[start : start + n])
    except ValueError:
        raise error(f"{what}: header is not valid JSON") from None
    if not isinstance(head, dict):
        raise error(f"{what}: header is not a JSON object")
    return head, blob[start + n :]
