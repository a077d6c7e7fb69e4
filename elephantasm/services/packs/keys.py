"""What selects a pack: the request, its canonical inputs and its snapshot-cache key."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from elephantasm.domain.fingerprint import PACK_FORMAT_VERSION, canonical_json, normalise_query, sha256_hex
from elephantasm.domain.presets import PackConfig


@dataclass(frozen=True, slots=True)
class PackRequest:
    """One pack to serve: who, what for, and the quantised ``as_of`` bucket."""

    org_id: uuid.UUID
    anima_id: uuid.UUID
    query: str | None  # already normalised (domain.fingerprint.normalise_query)
    config: PackConfig
    max_tokens: int
    encoding: str
    as_of: datetime
    session_id: str | None = None
    embedding_space: str | None = None
    """The server's embedding space: a queried pack depends on which embedder ranked it."""


@lru_cache(maxsize=256)
def _config_dict(config: PackConfig) -> dict[str, Any]:
    # Presets are shared frozen objects: dump each once instead of on every cache lookup.
    return config.canonical_dict()


def pack_key_inputs(req: PackRequest, state_version: int) -> dict[str, Any]:
    """Every input a pack is a pure function of (docs/design.md §5), canonical and JSON-safe, plus
    the explicit session and, with a query, the embedding space when given.

    Runs on every cache lookup, so the config dump is memoised; ``tests/packs`` checks it against a
    plain reference (``tests/support/pack_keys.py``).
    """
    inputs: dict[str, Any] = {
        "v": PACK_FORMAT_VERSION,
        "anima_id": str(req.anima_id),
        "state_version": int(state_version),
        "query": normalise_query(req.query),
        "config": _config_dict(req.config),
        "max_tokens": int(req.max_tokens),
        "encoding": req.encoding,
        "as_of_bucket": req.as_of.astimezone(UTC).isoformat(),
    }
    if req.session_id is not None:
        inputs["session_id"] = req.session_id
    if req.embedding_space is not None and req.query is not None:
        inputs["embedding_space"] = req.embedding_space
    return inputs


def snapshot_key(inputs: dict[str, Any]) -> str:
    """The snapshot-cache key of canonical inputs: their sha256.

    The ``pack:v<N>:`` prefix is left out so the key fits ``pack_snapshots.cache_key`` (64
    chars); the format version is hashed in anyway (``inputs["v"]``).
    """
    return sha256_hex(canonical_json(inputs))
