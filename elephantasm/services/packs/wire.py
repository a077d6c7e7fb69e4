"""Assemble the wire pack (docs/design.md §6) from a packing result."""

from __future__ import annotations

import uuid
from datetime import datetime

from elephantasm.domain.packing import PackResult
from elephantasm.domain.render import Layer
from elephantasm.domain.temporal import TemporalContext
from elephantasm.schemas.packs import MemoryPackRead
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
) -> MemoryPackRead:
    """The pack as served; counts are of chosen items, ``context`` is the exact prompt text."""
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
    return MemoryPackRead.model_validate(
        {
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
    )
