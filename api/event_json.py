"""Events as response bytes straight from database rows: building ``EventRead`` models per event
costs more CPU than the database work. The rows carry exactly ``EventRead``'s fields in its order;
``meta`` arrives as jsonb text and is embedded as is."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from elephantasm.services.event_copy import StoredRow

_encoder = msgspec.json.Encoder()


def _wire(row: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(row)
    out["meta"] = msgspec.Raw(row["meta"].encode())
    return out


def encode_event(row: Mapping[str, Any]) -> bytes:
    """One event (``EventRead``) as JSON."""
    return _encoder.encode(_wire(row))


def encode_batch(stored: Sequence[StoredRow]) -> bytes:
    """``EventBatchRead`` as JSON: the events in request order and the created/deduplicated counts."""
    created = sum(1 for s in stored if s.created)
    return _encoder.encode(
        {"items": [_wire(s.row) for s in stored], "created": created, "deduplicated": len(stored) - created}
    )
