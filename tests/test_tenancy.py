"""Two orgs: every cross-org access is a 404 (never a 403, never a leak), and nothing changes."""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import Tenant

# (method, path template, json body template). {anima} and {event} are the victim's ids.
CROSS_ORG_REQUESTS = [
    ("GET", "/api/animas/{anima}", None),
    ("PATCH", "/api/animas/{anima}", {"name": "stolen"}),
    ("DELETE", "/api/animas/{anima}", None),
    ("GET", "/api/events/{event}", None),
    ("GET", "/api/events?anima_id={anima}", None),
    ("POST", "/api/events", {"anima_id": "{anima}", "event_type": "system", "content": "x"}),
    ("POST", "/api/events/batch", {"events": [{"anima_id": "{anima}", "event_type": "system", "content": "x"}]}),
]


def _fill(template, ids: dict):  # type: ignore[no-untyped-def]
    if isinstance(template, str):
        return template.format(**ids)
    if isinstance(template, dict):
        return {k: _fill(v, ids) for k, v in template.items()}
    if isinstance(template, list):
        return [_fill(v, ids) for v in template]
    return template


@pytest.fixture
async def victim(client: httpx.AsyncClient, tenant: Tenant) -> dict:
    anima = (await client.post("/api/animas", json={"name": "victim"}, headers=tenant.headers)).json()
    body = {"anima_id": anima["id"], "event_type": "message.in", "content": "secret", "dedupe_key": "d1"}
    event = (await client.post("/api/events", json=body, headers=tenant.headers)).json()
    return {"anima": anima["id"], "event": event["id"]}


@pytest.mark.parametrize(("method", "path", "body"), CROSS_ORG_REQUESTS)
async def test_cross_org_access_is_404(
    client: httpx.AsyncClient, tenant: Tenant, other_tenant: Tenant, victim: dict, method: str, path: str, body
) -> None:  # type: ignore[no-untyped-def]
    r = await client.request(method, _fill(path, victim), json=_fill(body, victim), headers=other_tenant.headers)
    assert r.status_code == 404, r.text
    assert "secret" not in r.text and "victim" not in r.text
    # The owner still sees its anima unchanged, with exactly its one event.
    anima = (await client.get(f"/api/animas/{victim['anima']}", headers=tenant.headers)).json()
    assert anima["name"] == "victim"
    events = (await client.get("/api/events", params={"anima_id": victim["anima"]}, headers=tenant.headers)).json()
    assert [e["content"] for e in events["items"]] == ["secret"]


async def test_lists_show_only_own_org(
    client: httpx.AsyncClient, tenant: Tenant, other_tenant: Tenant, victim: dict
) -> None:
    animas = (await client.get("/api/animas", headers=other_tenant.headers)).json()["items"]
    events = (await client.get("/api/events", headers=other_tenant.headers)).json()["items"]
    assert animas == [] and events == []


async def test_same_dedupe_key_in_two_orgs_is_two_events(
    client: httpx.AsyncClient, tenant: Tenant, other_tenant: Tenant, victim: dict
) -> None:
    mine = (await client.post("/api/animas", json={"name": "mine"}, headers=other_tenant.headers)).json()
    body = {"anima_id": mine["id"], "event_type": "message.in", "content": "mine", "dedupe_key": "d1"}
    r = await client.post("/api/events", json=body, headers=other_tenant.headers)
    assert r.status_code == 201 and r.json()["content"] == "mine"
