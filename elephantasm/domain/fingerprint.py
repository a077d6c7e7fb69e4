"""Canonical serialisation and pack fingerprints.

Canonical JSON = sorted keys, no whitespace, UTF-8, no NaN; datetimes as UTC ISO-8601, UUIDs as
strings, pydantic models and dataclasses as their field dicts. Equal inputs give equal bytes on
every machine, so sha256 over them identifies a pack.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import uuid
from collections.abc import Mapping
from datetime import UTC, date, datetime
from enum import Enum
from typing import Any

from pydantic import BaseModel

# Bump whenever rendering or packing changes output for the same inputs, so old snapshots miss.
PACK_FORMAT_VERSION = 3

_WS = re.compile(r"\s+")


def _default(obj: Any) -> Any:
    if isinstance(obj, datetime):
        t = obj.replace(tzinfo=UTC) if obj.tzinfo is None else obj.astimezone(UTC)
        return t.isoformat()
    if isinstance(obj, date):
        return obj.isoformat()
    if isinstance(obj, uuid.UUID):
        return str(obj)
    if isinstance(obj, Enum):
        return obj.value
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json")
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj) if f.compare}
    if isinstance(obj, set | frozenset):
        return sorted(obj, key=lambda v: canonical_json(v))
    if isinstance(obj, bytes):
        return obj.hex()
    raise TypeError(f"not canonically serialisable: {type(obj).__name__}")


def canonical_json(obj: Any) -> str:
    """Sorted-key, whitespace-free JSON text of ``obj``; raises on NaN/inf or unknown types."""
    return json.dumps(obj, default=_default, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def sha256_hex(data: str | bytes) -> str:
    """Hex sha256 of ``data`` (strings as UTF-8)."""
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def normalise_query(query: str | None) -> str | None:
    """Whitespace-collapsed, stripped query; blank → None. Apply before scoring and keying."""
    if query is None:
        return None
    q = _WS.sub(" ", query).strip()
    return q or None


def pack_fingerprint(inputs: Mapping[str, Any], rendered: str) -> str:
    """sha256 over a pack's canonical inputs and its rendered bytes."""
    payload = {"v": PACK_FORMAT_VERSION, "inputs": inputs, "rendered_sha256": sha256_hex(rendered)}
    return sha256_hex(canonical_json(payload))
