"""Every dreamer route is tenant-scoped: another org's run, memory, knowledge or identity is a 404."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy import select

from elephantasm.db.models import Knowledge, Memory
from elephantasm.runtime import Runtime
from elephantasm.services.dreams import run_dream
from tests.conftest import Tenant
from tests.dreams.helpers import add_events, new_anima, turns

# (method, path, json body). {anima}, {run}, {memory}, {knowledge} are the victim's ids.
CROSS_ORG = [
    ("POST", "/api/dreams/trigger", {"anima_id": "{anima}"}),
    ("GET", "/api/dreams/sessions?anima_id={anima}", None),
    ("GET", "/api/dreams/sessions/{run}", None),
    ("GET", "/api/memories?anima_id={anima}", None),
    ("GET", "/api/memories/{memory}", None),
    ("PATCH", "/api/memories/{memory}", {"summary": "stolen"}),
    ("DELETE", "/api/memories/{memory}", None),
    ("GET", "/api/memories/{memory}/events", None),
    ("POST", "/api/memories/search/semantic", {"anima_id": "{anima}", "query": "secret"}),
    ("GET", "/api/knowledge?anima_id={anima}", None),
    ("GET", "/api/knowledge/{knowledge}", None),
    ("GET", "/api/knowledge/{knowledge}/history", None),
    ("POST", "/api/knowledge/search/semantic", {"anima_id": "{anima}", "query": "secret"}),
    ("GET", "/api/identities/anima/{anima}", None),
    ("GET", "/api/identities/anima/{anima}/history", None),
    ("POST", "/api/identities/anima/{anima}/restore", {"version": 1}),
]


def _fill(template, ids: dict):  # type: ignore[no-untyped-def]
    if isinstance(template, str):
        return template.format(**ids)
    if isinstance(template, dict):
        return {k: _fill(v, ids) for k, v in template.items()}
    return template


@pytest.fixture
async def victim(runtime: Runtime, tenant: Tenant) -> dict:
    anima_id = await new_anima(runtime, tenant.org_id, "victim")
    texts = ["My secret code is the word marmalade and I live in Oslo.", "Understood, the secret stays with me."]
    await add_events(runtime, tenant.org_id, anima_id, turns(texts))
    run = await run_dream(runtime.dreams, tenant.org_id, anima_id)
    async with runtime.read_session() as session:
        memory = (await session.execute(select(Memory.id).where(Memory.anima_id == anima_id))).scalars().first()
        knowledge = (
            (await session.execute(select(Knowledge.id).where(Knowledge.anima_id == anima_id))).scalars().first()
        )
    assert memory and knowledge
    return {"anima": str(anima_id), "run": str(run.id), "memory": str(memory), "knowledge": str(knowledge)}


@pytest.mark.parametrize(("method", "path", "body"), CROSS_ORG)
async def test_cross_org_access_is_404(
    client: httpx.AsyncClient, tenant: Tenant, other_tenant: Tenant, victim: dict, method: str, path: str, body
) -> None:  # type: ignore[no-untyped-def]
    before = (await client.get(f"/api/memories/{victim['memory']}", headers=tenant.headers)).json()
    r = await client.request(method, _fill(path, victim), json=_fill(body, victim), headers=other_tenant.headers)
    assert r.status_code == 404, r.text
    assert "secret" not in r.text and "marmalade" not in r.text
    after = (await client.get(f"/api/memories/{victim['memory']}", headers=tenant.headers)).json()
    assert after == before
    runs = await client.get("/api/dreams/sessions", params={"anima_id": victim["anima"]}, headers=tenant.headers)
    assert [r["id"] for r in runs.json()["items"]] == [victim["run"]]  # nothing was triggered


async def test_unfiltered_lists_show_only_own_org(
    client: httpx.AsyncClient, other_tenant: Tenant, victim: dict
) -> None:
    for path in ("/api/dreams/sessions", "/api/memories", "/api/knowledge"):
        r = await client.get(path, headers=other_tenant.headers)
        assert r.status_code == 200 and r.json()["items"] == [], path


async def test_routes_need_a_key(client: httpx.AsyncClient, victim: dict) -> None:
    for method, path, body in CROSS_ORG:
        r = await client.request(method, _fill(path, victim), json=_fill(body, victim))
        assert r.status_code == 401, (method, path)
