"""Response models: typed pack layers, tolerance of unknown fields, 0.2.0-style access."""

from __future__ import annotations

from uuid import UUID

from _sdk_support import anima_json, event_json, pack_json

from elephantasm_sdk import (
    Anima,
    DreamRun,
    Event,
    Identity,
    IdentityContext,
    MemoryPack,
    ScoredKnowledge,
    ScoredMemory,
    TemporalContext,
)

A = "00000000-0000-4000-8000-0000000000a1"
P = "00000000-0000-4000-8000-0000000000c3"


def test_pack_has_typed_layers_and_prompt() -> None:
    pack = MemoryPack.model_validate(pack_json(P, A, context="CTX"))
    assert pack.as_prompt() == "CTX" == pack.context
    assert (pack.fingerprint, pack.encoding, pack.state_version, pack.token_count) == ("f" * 64, "o200k_base", 7, 42)
    assert isinstance(pack.identity, IdentityContext) and pack.identity.prose == "I help."
    assert isinstance(pack.session_memories[0], ScoredMemory)
    assert pack.long_term_memories[0].breakdown.recency == 0.9
    assert pack.session_memories[0].provenance == ["00000000-0000-4000-8000-000000000021"]
    assert isinstance(pack.knowledge[0], ScoredKnowledge) and pack.knowledge[0].knowledge_type == "FACT"
    assert isinstance(pack.temporal_context, TemporalContext) and pack.temporal_context.hours_ago == 3.0


def test_unknown_fields_are_kept_at_every_level() -> None:
    pack = MemoryPack.model_validate(pack_json(P, A))
    assert pack.model_extra == {"server_only": "ok"}
    assert pack.content.model_extra == {"new_layer": {"x": 1}}
    assert pack.session_memories[0].model_extra == {"novel": True}
    assert pack.session_memories[0].breakdown.model_extra == {"future_factor": 1}
    assert Anima.model_validate({**anima_json(A), "state_version": 3}).model_extra == {"state_version": 3}


def test_content_keeps_dict_style_access_from_020() -> None:
    pack = MemoryPack.model_validate(pack_json(P, A, context="CTX"))
    assert pack.content["context"] == "CTX" and pack.content.get("context") == "CTX"
    assert pack.content.get("missing", "dflt") == "dflt" and "identity" in pack.content
    assert pack.content["identity"]["prose"] == "I help."
    assert pack.session_memories[0].breakdown["importance"] == 0.5


def test_minimal_and_null_content_packs() -> None:
    minimal = MemoryPack.model_validate({"id": P, "anima_id": A, "content": None})
    assert minimal.as_prompt() == "" and minimal.identity is None and minimal.session_memories == []
    only_top = MemoryPack.model_validate({"id": P, "anima_id": A, "context": "top"})
    assert only_top.as_prompt() == "top"


def test_null_factors_are_tolerated() -> None:
    item = ScoredMemory.model_validate({"id": P, "score": 1, "breakdown": {"relevance": None}})
    assert item.breakdown.relevance is None


def test_provenance_tolerates_objects() -> None:
    item = ScoredMemory.model_validate({"id": P, "score": 1, "provenance": [{"event_id": A}, UUID(A)]})
    assert item.provenance == [A, A]


def test_event_anima_identity_dream_models() -> None:
    event = Event.model_validate(event_json(P, A, dedupe_key="k", session_id="s"))
    assert event.dedupe_key == "k" and event.anima_id == UUID(A)
    ident = Identity.model_validate({"anima_id": A, "self": {"likes": "tea"}, "prose": "p"})
    assert ident.self_reflection == {"likes": "tea"}
    run = DreamRun.model_validate({"id": P, "anima_id": A, "status": "completed"})
    assert run.is_finished and not DreamRun.model_validate({"id": P, "anima_id": A, "status": "running"}).is_finished
