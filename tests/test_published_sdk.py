"""Wire compatibility: the published ``elephantasm==0.2.0`` client works against a real server,
unchanged, pointed at it through ``ELEPHANTASM_ENDPOINT`` (docs/design.md §1).

The SDK runs in its own virtualenv (see ``tests/support/published_sdk.py``); what it stored is
checked from our side over ``GET /api/events``. ``inject()`` belongs to a later feature.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.conftest import Tenant
from tests.support.published_sdk import published_sdk_python, run_sdk_script

EXTRACT_SCRIPT = """
import json
from datetime import datetime, timezone
from elephantasm import EventType, create_anima, extract

anima = create_anima("sdk-anima", description="made by the published SDK", meta={"via": "sdk"})
sent = []
for i, event_type in enumerate(EventType):
    for j in range(3):
        n = i * 3 + j
        kwargs = dict(
            session_id=f"session-{j}",
            role=["user", "assistant", "tool", "tool", "system"][i],
            author=f"author-{n}",
            meta={"n": n, "tags": ["a", "b"], "nested": {"ok": True}},
            importance_score=round(n / 15, 3),
        )
        if j == 0:
            kwargs["occurred_at"] = datetime(2026, 1, 2, 3, 4, n, tzinfo=timezone.utc)
        event = extract(event_type, f"content {n}: {event_type.value}", anima_id=anima.id, **kwargs)
        sent.append({
            "id": str(event.id), "event_type": event_type.value, "content": event.content,
            "session_id": kwargs["session_id"], "role": kwargs["role"], "author": kwargs["author"],
            "meta": kwargs["meta"], "importance_score": kwargs["importance_score"],
            "occurred_at": kwargs["occurred_at"].isoformat() if "occurred_at" in kwargs else None,
            "returned": event.model_dump(mode="json"),
        })
print(json.dumps({"anima": anima.model_dump(mode="json"), "sent": sent}))
"""

ERRORS_SCRIPT = """
import json, uuid
import elephantasm
from elephantasm import AuthenticationError, Elephantasm, NotFoundError, ValidationError, EventType

out = {}
bad = Elephantasm(api_key="sk_live_" + "x" * 40)
try:
    bad.create_anima("nope")
except AuthenticationError as exc:
    out["401"] = {"type": type(exc).__name__, "status": exc.status_code, "message": exc.message}

good = Elephantasm()
try:
    good.extract(EventType.MESSAGE_IN, "hello", anima_id=str(uuid.uuid4()))
except NotFoundError as exc:
    out["404"] = {"type": type(exc).__name__, "status": exc.status_code, "message": exc.message}

anima = good.create_anima("errors")
try:
    good.extract(EventType.MESSAGE_IN, "   ", anima_id=anima.id)  # passes the SDK, not the server
except ValidationError as exc:
    out["422"] = {"type": type(exc).__name__, "status": exc.status_code, "message": exc.message}
out["from_site_packages"] = "site-packages" in elephantasm.__file__
print(json.dumps(out))
"""


@pytest.fixture(scope="session")
def sdk_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The published SDK's interpreter."""
    return published_sdk_python(tmp_path_factory)


async def _events(live_server: str, tenant: Tenant, anima_id: str) -> list[dict]:
    async with httpx.AsyncClient(base_url=live_server, headers=tenant.headers, timeout=30) as c:
        r = await c.get("/api/events", params={"anima_id": anima_id, "limit": 1000})
    assert r.status_code == 200, r.text
    return r.json()["items"]


async def test_extract_of_every_event_type_is_stored_exactly(
    sdk_python: Path, live_server: str, tenant: Tenant
) -> None:
    """create_anima + extract (all five EventTypes, every optional field) round-trip unchanged."""
    out = run_sdk_script(sdk_python, EXTRACT_SCRIPT, tenant.api_key, live_server)
    anima = out["anima"]
    assert anima["name"] == "sdk-anima" and anima["meta"] == {"via": "sdk"}
    sent = {e["id"]: e for e in out["sent"]}
    assert len(sent) == 15

    stored = {e["id"]: e for e in await _events(live_server, tenant, anima["id"])}
    assert set(stored) == set(sent)
    for event_id, s in sent.items():
        row = stored[event_id]
        assert row["anima_id"] == anima["id"]
        for field in ("event_type", "content", "session_id", "role", "author", "meta", "importance_score"):
            assert row[field] == s[field], (field, row[field], s[field])
        if s["occurred_at"]:
            assert row["occurred_at"].replace("Z", "+00:00") == s["occurred_at"]
        # What the SDK parsed from our 201 is what we store.
        assert s["returned"]["id"] == event_id and s["returned"]["content"] == row["content"]
    assert {e["event_type"] for e in stored.values()} == {
        "message.in",
        "message.out",
        "tool.call",
        "tool.result",
        "system",
    }


def test_errors_map_to_the_sdk_exception_classes(sdk_python: Path, live_server: str, tenant: Tenant) -> None:
    """401 → AuthenticationError, 404 → NotFoundError, 422 → ValidationError, each with our detail."""
    out = run_sdk_script(sdk_python, ERRORS_SCRIPT, tenant.api_key, live_server)
    assert out["from_site_packages"] is True  # the published package, not the repository's
    assert out["401"]["type"] == "AuthenticationError" and out["401"]["status"] == 401
    assert "API key" in out["401"]["message"]
    assert out["404"]["type"] == "NotFoundError" and "not found" in out["404"]["message"]
    assert out["422"]["type"] == "ValidationError" and "content" in out["422"]["message"]
