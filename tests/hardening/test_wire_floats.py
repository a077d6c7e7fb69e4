"""Every float the wire accepts that reaches SQL or math: absurd values (subnormal, 1e308, past a
documented bound) are a 422 naming the field; values inside the documented range work, with
finite results (issue 28: a subnormal weight once overflowed in Postgres, a 500)."""

from __future__ import annotations

import json
import math
import uuid

import httpx
import pytest

from elephantasm.runtime import Runtime
from elephantasm.services.dreams import run_dream
from tests.conftest import Tenant
from tests.hardening.helpers import error, retrailed

SUBNORMAL, TINY, HUGE = 1e-320, 1e-300, 1e308
NDJSON = {"content-type": "application/x-ndjson"}


@pytest.fixture
async def seeded(client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, anima: dict) -> dict:
    """The anima with events (one of a subnormal importance) and a dream's memories."""
    events = [
        {"anima_id": anima["id"], "event_type": "message.in", "role": "user", "content": text, "session_id": "s"}
        for text in ("I live in Porto and I love green tea.", "My sister Ana is a chemist.")
    ]
    events[0]["importance_score"] = SUBNORMAL
    r = await client.post("/api/events/batch", json={"events": events}, headers=tenant.headers)
    assert r.status_code == 201, r.text
    assert r.json()["items"][0]["importance_score"] == SUBNORMAL
    await run_dream(runtime.dreams, tenant.org_id, uuid.UUID(anima["id"]))
    return anima


def _finite_scores(pack: dict) -> None:
    content = pack["content"]
    items = content["session_memories"] + content["long_term_memories"] + content["knowledge"]
    assert items, "the pack holds scored items"
    for item in items:
        assert math.isfinite(item["score"]), item
        assert all(math.isfinite(v) for v in item["breakdown"].values()), item


@pytest.mark.parametrize(
    "field", ["recency_half_life_hours", "decay_half_life_hours", "session_window_hours", "decay_growth"]
)
@pytest.mark.parametrize("value", [SUBNORMAL, 5e-324, TINY, 1e-9, HUGE, -1.0, 0.0])
async def test_compile_refuses_an_absurd_half_life_window_or_growth(
    client: httpx.AsyncClient, tenant: Tenant, seeded: dict, field: str, value: float
) -> None:
    body = {"anima_id": seeded["id"], "query": "tea", field: value}
    assert field in error(await client.post("/api/packs/compile", json=body, headers=tenant.headers), 422)


@pytest.mark.parametrize(
    "overrides",
    [
        {"recency_half_life_hours": 0.001, "decay_half_life_hours": 0.001, "session_window_hours": 0.001},
        {
            "recency_half_life_hours": 1e6,
            "decay_half_life_hours": 1e6,
            "decay_growth": 10,
            "session_window_hours": 8760,
        },
        {"min_score": SUBNORMAL, "weights": {"importance": 1000, "recency": 0.001}},
    ],
)
async def test_compile_inside_the_documented_ranges_gives_finite_scores(
    client: httpx.AsyncClient, tenant: Tenant, seeded: dict, overrides: dict
) -> None:
    body = {"anima_id": seeded["id"], "query": "tea", "as_of": "2100-01-01T00:00:00Z", **overrides}
    r = await client.post("/api/packs/compile", json=body, headers=tenant.headers)
    assert r.status_code == 200, r.text
    _finite_scores(r.json())


async def test_memory_scores_and_similarity_thresholds_take_tiny_values(
    client: httpx.AsyncClient, tenant: Tenant, seeded: dict
) -> None:
    memories = (await client.get("/api/memories", params={"anima_id": seeded["id"]}, headers=tenant.headers)).json()
    assert memories["items"], "the dream made memories"
    mid = memories["items"][0]["id"]
    r = await client.patch(
        f"/api/memories/{mid}", json={"importance": SUBNORMAL, "confidence": SUBNORMAL}, headers=tenant.headers
    )
    assert r.status_code == 200, r.text
    assert r.json()["importance"] == SUBNORMAL
    for path in ("/api/memories/search/semantic", "/api/knowledge/search/semantic"):
        body = {"anima_id": seeded["id"], "query": "tea", "min_similarity": SUBNORMAL}
        r = await client.post(path, json=body, headers=tenant.headers)
        assert r.status_code == 200, (path, r.text)
    for bad in (HUGE, -HUGE):
        r = await client.patch(f"/api/memories/{mid}", json={"importance": bad}, headers=tenant.headers)
        assert "importance" in error(r, 422)
    pack = await client.post(
        "/api/packs/compile", json={"anima_id": seeded["id"], "query": "tea"}, headers=tenant.headers
    )
    assert pack.status_code == 200, pack.text
    _finite_scores(pack.json())


@pytest.mark.parametrize("value", [HUGE, -1.0, 1.5])
async def test_import_refuses_an_importance_score_out_of_range(
    client: httpx.AsyncClient, tenant: Tenant, other_tenant: Tenant, seeded: dict, value: float
) -> None:
    r = await client.get(f"/api/animas/{seeded['id']}/export", headers=tenant.headers)
    lines = r.text.splitlines(keepends=True)[:-1]
    at = next(i for i, line in enumerate(lines) if json.loads(line)["kind"] == "event")
    lines[at] = json.dumps(json.loads(lines[at]) | {"importance_score": value}) + "\n"
    r = await client.post("/api/animas/import", content=retrailed(lines), headers=other_tenant.headers | NDJSON)
    assert "importance_score" in error(r, 422)
    names = [a["name"] for a in (await client.get("/api/animas", headers=other_tenant.headers)).json()["items"]]
    assert names == [], "nothing was imported"


@pytest.mark.parametrize("value", [SUBNORMAL, 5e-324, TINY])
async def test_chat_refuses_a_temperature_that_overflows_the_sampler(
    client: httpx.AsyncClient, tenant: Tenant, anima: dict, value: float
) -> None:
    body = {"messages": [{"role": "user", "content": "hi"}], "user": anima["id"], "temperature": value, "max_tokens": 1}
    r = await client.post("/v1/chat/completions", json=body, headers=tenant.headers)
    assert "temperature" in error(r, 422)
