"""Assemble the wire pack (docs/design.md §6) from a packing result.

The pack is built as plain data in :class:`~elephantasm.schemas.packs.MemoryPackRead`'s field
order and encoded with msgspec (:func:`encode`): the same bytes as validating it into the model
and dumping that (tests check it byte for byte), ~10x faster: no ~200 nested models per compile.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

import msgspec

from elephantasm.domain.packing import PackResult
from elephantasm.domain.render import Layer
from elephantasm.domain.temporal import TemporalContext
from elephantasm.services.packs.items import IdentityData, Scorer, knowledge_wire, memory_wire
from elephantasm.services.packs.keys import PackRequest


def _temporal(context: TemporalContext | None) -> dict | None:
    # SDK 0.2.0 requires last_event_at/hours_ago when the object is present: null it otherwise.
    if context is None or context.last_event_at is None or context.hours_ago is None:
        return None
    return context.as_dict()


def build_pack(
    req: PackRequest,
    result: PackResult,
    scorer: Scorer,
    *,
    pack_id: uuid.UUID,
    fingerprint: str,
    state_version: int,
    identity: IdentityData | None,
    temporal: TemporalContext | None,
    session_id: str | None,
    layer_tokens: dict[str, int],
    compiled_at: datetime,
) -> dict[str, Any]:
    """The pack as served (``MemoryPackRead`` data, in its field order); counts are of chosen
    items, ``context`` is the exact prompt text."""
    session = [memory_wire(Layer.SESSION, it, scorer) for it in result.items(Layer.SESSION)]
    long_term = [memory_wire(Layer.LONG_TERM, it, scorer) for it in result.items(Layer.LONG_TERM)]
    knowledge = [knowledge_wire(it) for it in result.items(Layer.KNOWLEDGE)]
    has_identity = bool(result.items(Layer.IDENTITY))
    content = {
        "context": result.text,
        "identity": identity.wire() if identity is not None and has_identity else None,
        "session_memories": session,
        "long_term_memories": long_term,
        "knowledge": knowledge,
        "temporal_context": _temporal(temporal) if result.items(Layer.TEMPORAL) else None,
    }
    return {
        "id": pack_id,
        "anima_id": req.anima_id,
        "query": req.query,
        "preset_name": req.config.preset_name,
        "session_id": session_id,
        "session_memory_count": len(session),
        "knowledge_count": len(knowledge),
        "long_term_memory_count": len(long_term),
        "has_identity": has_identity,
        "token_count": result.token_count,
        "max_tokens": req.max_tokens,
        "encoding": req.encoding,
        "fingerprint": fingerprint,
        "state_version": state_version,
        "as_of": req.as_of,
        "layer_tokens": layer_tokens,
        "compiled_at": compiled_at,
        "created_at": compiled_at,
        "context": result.text,
        "content": content,
    }


_ENCODER = msgspec.json.Encoder()


def encode(data: dict[str, Any]) -> bytes:
    """The JSON bytes of :func:`build_pack`'s data: what ``MemoryPackRead.model_validate(data)
    .model_dump_json()`` gives. Every value already has its field's type (floats, UUIDs, aware
    datetimes, str), and msgspec writes them as pydantic does: shortest float repr, NaN and
    infinities as null, UTC as ``Z``, non-ASCII unescaped. (The one known difference, a float of
    magnitude >= 1e16 as ``1e16`` rather than ``1e+16``, cannot occur: scores, factors and
    similarities lie in [-1, 1] and ``hours_ago`` is below 1e8 within datetime's range.)"""
    return _ENCODER.encode(data)
