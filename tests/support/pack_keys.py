"""Reference pack keys: every input a pack is a pure function of (docs/design.md §5), built plainly.

``services/packs/keys.py`` builds the same inputs on every cache lookup (with memoised config
dumps); the tests check that the two agree and that every input changes the key.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from elephantasm.domain.fingerprint import PACK_FORMAT_VERSION, canonical_json, normalise_query, sha256_hex
from elephantasm.domain.presets import PackConfig


def pack_inputs(
    anima_id: uuid.UUID | str,
    state_version: int,
    query: str | None,
    config: PackConfig,
    max_tokens: int,
    encoding: str,
    as_of_bucket: datetime,
) -> dict[str, Any]:
    """The canonical inputs of a pack, as a JSON-safe dict."""
    bucket = as_of_bucket.replace(tzinfo=UTC) if as_of_bucket.tzinfo is None else as_of_bucket.astimezone(UTC)
    return {
        "v": PACK_FORMAT_VERSION,
        "anima_id": str(anima_id),
        "state_version": int(state_version),
        "query": normalise_query(query),
        "config": config.canonical_dict(),
        "max_tokens": int(max_tokens),
        "encoding": encoding,
        "as_of_bucket": bucket.isoformat(),
    }


def cache_key(*args: Any, **kwargs: Any) -> str:
    """``pack:v<N>:<sha256 of canonical pack_inputs>`` (same arguments as :func:`pack_inputs`)."""
    return f"pack:v{PACK_FORMAT_VERSION}:{sha256_hex(canonical_json(pack_inputs(*args, **kwargs)))}"
