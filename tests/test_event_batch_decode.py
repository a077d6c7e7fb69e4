"""The msgspec fast path of a batch body (issue 20) accepts only what ``EventBatchCreate`` accepts,
with the same values, and its settings checks raise what ``check_events`` raises."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from pydantic import ValidationError as PydanticValidationError

from elephantasm.domain.errors import DomainError
from elephantasm.schemas.event_batch import decode_batch
from elephantasm.schemas.events import EventBatchCreate
from elephantasm.services.event_copy import meta_json
from elephantasm.services.events import check_batch, check_events
from tests.conftest import Tenant

ANIMA = str(uuid.uuid4())
_FIELDS = ("anima_id", "event_type", "content", "role", "author", "summary", "occurred_at", "session_id", "meta",
           "source_uri", "dedupe_key", "importance_score")  # fmt: skip

_text = st.one_of(
    st.sampled_from(["", " ", "\t\n", "a\u0000b", "ok", "é" * 64, "😀" * 65, "x" * 201, "\\u0000"]),
    st.text(max_size=8),
)
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | _text,
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(_text, kids, max_size=3),
    max_leaves=8,
)
_instants = (
    st.sampled_from(
        [
            "2026-01-01T00:00:00Z",
            "2026-01-01T00:00:00",
            "2026-01-01T00:00:00+05:30",
            "2026-01-01T00:00:00.1234567Z",
            "2026-01-01 00:00:00z",
            "1899-12-31T23:59:59Z",
            "2999-12-31T23:59:59Z",
            "garbage",
            "2026-13-01T00:00:00Z",
            "2026-01-01",
            "2026-01-01T00:00:00.5-01:00",
            "",
        ]
    )
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.none()
    | st.booleans()
)
_values: dict[str, Any] = {
    "anima_id": st.sampled_from([ANIMA, ANIMA.replace("-", ""), ANIMA.upper(), "{" + ANIMA + "}", "nope", 5]),
    "event_type": st.sampled_from(["message.in", "tool.call", "system", "nope", "", 1]) | st.none(),
    "content": _text | st.none() | st.integers(),
    "role": _text | st.none(),
    "author": _text | st.none(),
    "summary": _text | st.none(),
    "occurred_at": _instants,
    "session_id": _text | st.none(),
    "meta": st.dictionaries(_text, _json, max_size=3) | st.none() | st.just([1]),
    "source_uri": _text | st.none(),
    "dedupe_key": _text | st.none(),
    "importance_score": st.sampled_from([0, 1, 0.5, 1.5, -0.1, "0.5", True, None, 10**400 // 10**390]),
}
_SKELETON = {"anima_id": ANIMA, "event_type": "message.in", "content": "hi"}
_events = st.tuples(
    st.fixed_dictionaries({}, optional={**_values, "extra": st.integers()}),
    st.sets(st.sampled_from(sorted(_SKELETON)), max_size=1),
).map(lambda t: {k: v for k, v in (_SKELETON | t[0]).items() if k not in t[1]})
_bodies = st.fixed_dictionaries({"events": st.lists(_events, max_size=3)}, optional={"other": st.integers()})


def _fields(event: Any) -> dict[str, Any]:
    return {name: getattr(event, name) for name in _FIELDS}


@hsettings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_bodies)
def test_fast_decode_accepts_only_what_the_model_accepts_with_the_same_values(body: dict) -> None:
    raw = json.dumps(body).encode()
    fast = decode_batch(raw)
    try:
        model = EventBatchCreate.model_validate(json.loads(raw))
    except PydanticValidationError:
        assert fast is None, body
        return
    if fast is not None:
        assert [_fields(e) for e in fast.events] == [_fields(e) for e in model.events]


def test_fast_decode_takes_a_plain_batch_and_leaves_the_rest_to_the_model() -> None:
    event = {"anima_id": ANIMA, "event_type": "tool.call", "content": "x", "occurred_at": "2026-01-01T01:00:00+01:00",
             "meta": {"n": [1, {"b": None}]}, "importance_score": 1}  # fmt: skip
    fast = decode_batch(json.dumps({"events": [event, event]}).encode())
    assert fast is not None and fast.events[0].occurred_at == datetime(2026, 1, 1, tzinfo=UTC)
    assert fast.events[0].importance_score == 1.0
    for bad in (b"", b"[]", b"\xff", b'{"events": []}', b'{"events": [{"content": "a\\u0000"}]}'):
        assert decode_batch(bad) is None


def _error(fn: Any) -> tuple[type, str]:
    try:
        fn()
    except DomainError as exc:
        return type(exc), str(exc.detail)
    return type(None), ""


@pytest.mark.parametrize(
    "changes",
    [
        [{}],
        [{}, {"meta": {"a": "x" * 300}}],
        [{"meta": json.loads('{"a": ' * 10 + "{}" + "}" * 10)}, {}],
        [{}, {"occurred_at": "2999-01-01T00:00:00Z"}],
        [{"content": "é" * 300}, {"summary": "ü" * 200}],
        [{"content": "é" * 150, "summary": "x" * 50, "meta": {"k": "ü" * 20}}],
        [{"meta": {"a": "{[{[{[{[{[{["}}],
    ],
)
def test_batch_checks_raise_what_the_model_checks_raise(settings, changes: list[dict]) -> None:  # type: ignore[no-untyped-def]
    tight = settings.model_copy(update={"max_json_depth": 4, "max_json_bytes": 256, "max_event_bytes": 400})
    body = {"events": [{"anima_id": ANIMA, "event_type": "system", "content": "c"} | c for c in changes]}
    fast = decode_batch(json.dumps(body).encode())
    assert fast is not None
    model = EventBatchCreate.model_validate(body)
    now = datetime(2026, 1, 1, tzinfo=UTC)
    expected = _error(lambda: check_events(model.events, tight, now))
    assert _error(lambda: check_batch(fast.events, tight, now)) == expected
    if expected[1] == "":
        assert check_batch(fast.events, tight, now) == [meta_json(e.meta) for e in model.events]


async def test_a_batch_with_a_loosely_typed_field_is_refused_and_stores_nothing(
    client: httpx.AsyncClient, tenant: Tenant, anima: dict
) -> None:
    """Strict wire types hold for batches too: a number sent as a string is a 422 naming the field."""
    lax = {"anima_id": anima["id"], "event_type": "system", "content": "x", "importance_score": "0.5"}
    r = await client.post("/api/events/batch", json={"events": [lax]}, headers=tenant.headers)
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["loc"] == ["body", "events", 0, "importance_score"]
    listed = await client.get("/api/events", params={"anima_id": anima["id"]}, headers=tenant.headers)
    assert listed.status_code == 200
    assert listed.json()["items"] == []


async def test_new_rows_in_the_response_are_what_was_stored(
    client: httpx.AsyncClient, tenant: Tenant, anima: dict
) -> None:
    def event(**extra: Any) -> dict:
        return {"anima_id": anima["id"], "event_type": "tool.call", "content": "c"} | extra

    events = [
        event(
            occurred_at="2026-01-01T00:00:00.123456-07:00", importance_score=1, meta={"b": 1, "a": [1e-7, 1e20, "ü"]}
        ),
        event(dedupe_key="d", role="r", author="a", summary="s", session_id="x", source_uri="u"),
        event(dedupe_key="d", content="second"),
        event(occurred_at="2023-11-14T22:13:20Z", importance_score=0.25),
    ]
    for batch in (events[:3], events[3:]):
        r = await client.post("/api/events/batch", json={"events": batch}, headers=tenant.headers)
        assert r.status_code == 201, r.text
        for item in r.json()["items"]:
            stored = await client.get(f"/api/events/{item['id']}", headers=tenant.headers)
            assert stored.json() == item
