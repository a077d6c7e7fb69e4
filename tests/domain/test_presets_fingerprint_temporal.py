"""Presets and PackConfig, canonical fingerprints / cache keys, and temporal context."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from elephantasm.domain.errors import ValidationError
from elephantasm.domain.fingerprint import canonical_json, normalise_query, pack_fingerprint
from elephantasm.domain.presets import (
    DEFAULT_PRESET,
    PRESET_NAMES,
    PackConfig,
    UnknownPresetError,
    get_preset,
    resolve_config,
)
from elephantasm.domain.render import Layer
from elephantasm.domain.temporal import NO_HISTORY_TEXT, humanise_duration, temporal_context
from elephantasm.services.packs.keys import PackRequest, pack_key_inputs, snapshot_key

ANIMA = uuid.UUID("00000000-0000-0000-0000-000000000001")
BUCKET = datetime(2025, 3, 10, 12, tzinfo=UTC)
ORG = uuid.UUID("00000000-0000-0000-0000-0000000000aa")


def test_presets_exist_and_default_is_conversational() -> None:
    assert set(PRESET_NAMES) == {"conversational", "conversational_ts_rank", "self_determined", "recent", "important"}
    assert get_preset(None).preset_name == DEFAULT_PRESET == "conversational"
    assert get_preset("  Recent ").preset_name == "recent"
    assert get_preset("self_determined").adaptive
    for name in PRESET_NAMES:
        cfg = get_preset(name)
        assert sum(cfg.shares.as_mapping().values()) > 0
        assert set(cfg.limits.as_mapping()) == {Layer.KNOWLEDGE, Layer.LONG_TERM, Layer.SESSION}


def test_unknown_preset_lists_valid_names() -> None:
    with pytest.raises(UnknownPresetError) as info:
        get_preset("nope")
    assert isinstance(info.value, ValidationError)
    for name in PRESET_NAMES:
        assert name in info.value.detail


def test_resolve_config_merges_nested_overrides() -> None:
    cfg = resolve_config("recent", {"weights": {"importance": 0.9}, "limits": {"knowledge": 2}, "min_score": 0.2})
    base = get_preset("recent")
    assert cfg.weights.importance == 0.9 and cfg.weights.recency == base.weights.recency
    assert cfg.limits.knowledge == 2 and cfg.limits.long_term == base.limits.long_term
    assert cfg.min_score == 0.2 and cfg.preset_name == "recent"
    for bad in ({"min_score": 2}, {"weights": {"importance": -1}}, {"bogus": 1}):
        with pytest.raises(ValidationError):
            resolve_config(None, bad)


def test_canonical_serialisation_is_stable() -> None:
    a = resolve_config(None, {"min_score": 0.1})
    b = PackConfig.model_validate(a.canonical_dict())
    assert a.canonical_json() == b.canonical_json() == canonical_json(a)
    assert " " not in a.canonical_json()
    assert (
        canonical_json({"b": 1, "a": [datetime(2025, 1, 1, 1, tzinfo=UTC)]})
        == '{"a":["2025-01-01T01:00:00+00:00"],"b":1}'
    )
    with pytest.raises(ValueError):
        canonical_json({"x": float("nan")})


def _key(**kw):  # type: ignore[no-untyped-def]
    args = {
        "anima_id": ANIMA,
        "state_version": 7,
        "query": "coffee",
        "config": get_preset(None),
        "max_tokens": 4000,
        "encoding": "o200k_base",
        "as_of_bucket": BUCKET,
    }
    a = {**args, **kw}
    req = PackRequest(ORG, a["anima_id"], a["query"], a["config"], a["max_tokens"], a["encoding"], a["as_of_bucket"])
    return snapshot_key(pack_key_inputs(req, a["state_version"]))


def test_cache_key_covers_every_input() -> None:
    base = _key()
    assert len(base) == 64 and base == _key()
    assert _key(query="  coffee \n") == base  # whitespace-normalised
    assert _key(query="") == _key(query=None)
    variants = [
        _key(anima_id=uuid.uuid4()),
        _key(state_version=8),
        _key(query="tea"),
        _key(config=get_preset("recent")),
        _key(config=resolve_config(None, {"min_score": 0.01})),
        _key(max_tokens=4001),
        _key(encoding="cl100k_base"),
        _key(as_of_bucket=BUCKET + timedelta(hours=1)),
    ]
    assert len({base, *variants}) == len(variants) + 1


def test_fingerprint_covers_inputs_and_bytes() -> None:
    req = PackRequest(ORG, ANIMA, "coffee", get_preset(None), 4000, "o200k_base", BUCKET)
    inputs = pack_key_inputs(req, 7)
    fp = pack_fingerprint(inputs, "## Identity\n- Name: Ada")
    assert len(fp) == 64 and fp == pack_fingerprint(dict(reversed(list(inputs.items()))), "## Identity\n- Name: Ada")
    assert fp != pack_fingerprint(inputs, "## Identity\n- Name: Bob")
    assert fp != pack_fingerprint({**inputs, "state_version": 8}, "## Identity\n- Name: Ada")
    assert normalise_query(" \t ") is None


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "less than a minute"),
        (59, "less than a minute"),
        (60, "1 minute"),
        (3599, "59 minutes"),
        (3600, "1 hour"),
        (47 * 3600, "1 day"),
        (3 * 86400 + 5, "3 days"),
        (15 * 86400, "2 weeks"),
        (90 * 86400, "3 months"),
        (800 * 86400, "2 years"),
    ],
)
def test_humanise_duration(seconds: float, text: str) -> None:
    assert humanise_duration(seconds) == text


def test_temporal_context() -> None:
    ctx = temporal_context(BUCKET - timedelta(days=3, hours=2), BUCKET, "talked about coffee")
    assert ctx.formatted == "3 days since last interaction"
    assert ctx.hours_ago == 74.0 and ctx.memory_summary == "talked about coffee"
    assert set(ctx.as_dict()) == {"last_event_at", "hours_ago", "memory_summary", "formatted"}
    assert temporal_context(None, BUCKET).formatted == NO_HISTORY_TEXT
    future = temporal_context(BUCKET + timedelta(minutes=5), BUCKET)
    assert future.hours_ago == 0.0 and future.formatted == "Less than a minute since last interaction"
