"""Another org's anima is a 404 on every pack route, and nothing of it leaks; another org's rows never
reach a pack."""

from __future__ import annotations

import uuid

import httpx
import pytest
from sqlalchemy import text

from elephantasm.runtime import Runtime
from elephantasm.services.packs import compiler
from elephantasm.services.packs.service import build_request
from tests.conftest import Tenant
from tests.packs.conftest import FROZEN_NOW
from tests.packs.helpers import extract, latest


@pytest.fixture
async def victim(pclient: httpx.AsyncClient, tenant: Tenant) -> dict:
    anima = (await pclient.post("/api/animas", json={"name": "victim"}, headers=tenant.headers)).json()
    await extract(pclient, tenant, anima["id"], "the secret recipe is cardamom")
    pack = (await latest(pclient, tenant, anima["id"])).json()
    return {"anima": anima["id"], "pack": pack["id"]}


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/api/animas/{anima}/memory-packs/latest", None),
        ("GET", "/api/animas/{anima}/memory-packs/latest?query=secret", None),
        ("GET", "/api/animas/{anima}/memory-packs", None),
        ("GET", "/api/memory-packs/{pack}", None),
        ("POST", "/api/packs/compile", {"anima_id": "{anima}", "query": "secret"}),
    ],
)
async def test_cross_org_pack_access_is_404(
    pclient: httpx.AsyncClient, other_tenant: Tenant, victim: dict, method: str, path: str, body: dict | None
) -> None:
    json_body = {k: v.format(**victim) for k, v in body.items()} if body else None
    r = await pclient.request(method, path.format(**victim), json=json_body, headers=other_tenant.headers)
    assert r.status_code == 404, r.text
    assert "cardamom" not in r.text and "victim" not in r.text


async def test_deleted_anima_is_404_on_every_pack_route(
    pclient: httpx.AsyncClient, tenant: Tenant, victim: dict
) -> None:
    assert (await pclient.delete(f"/api/animas/{victim['anima']}", headers=tenant.headers)).status_code == 204
    for path in (
        f"/api/animas/{victim['anima']}/memory-packs/latest",
        f"/api/animas/{victim['anima']}/memory-packs",
        f"/api/memory-packs/{victim['pack']}",
    ):
        assert (await pclient.get(path, headers=tenant.headers)).status_code == 404, path


async def test_bad_ids_are_422_and_missing_key_is_401(pclient: httpx.AsyncClient, tenant: Tenant) -> None:
    r = await pclient.get("/api/animas/not-a-uuid/memory-packs/latest", headers=tenant.headers)
    assert r.status_code == 422 and "anima_id" in r.text
    r = await pclient.get("/api/memory-packs/nope", headers=tenant.headers)
    assert r.status_code == 422 and "pack_id" in r.text
    r = await pclient.get("/api/animas/00000000-0000-0000-0000-000000000000/memory-packs/latest")
    assert r.status_code == 401


_ROW = """
INSERT INTO memories (id, org_id, anima_id, summary, importance, confidence, state, time_start, time_end,
                      created_at, updated_at)
VALUES (gen_random_uuid(), :org, :anima, :summary, 0.99, 0.9, 'active', :at, :at, :at, :at)
"""


async def test_a_memory_row_of_another_org_never_reaches_a_pack(
    pack_runtime: Runtime, tenant: Tenant, other_tenant: Tenant, panima: dict
) -> None:
    """The long-term statement's arms read the pack indexes keyed on the anima alone;
    a row that names the anima under another org (never written by the service) is still not served."""
    rt, anima = pack_runtime, uuid.UUID(panima["id"])
    async with rt.engine.begin() as conn:
        for org, summary in (
            (tenant.org_id, "the secret recipe is cardamom"),
            (other_tenant.org_id, "the secret recipe is saffron"),
        ):
            await conn.execute(text(_ROW), {"org": org, "anima": anima, "summary": summary, "at": FROZEN_NOW})
    for query in ("secret recipe", None):
        req = build_request(rt.packs, tenant.org_id, anima, query=query, as_of=FROZEN_NOW)
        body = bytes((await compiler.compile_pack(rt.packs, req)).body).decode()
        assert "cardamom" in body and "saffron" not in body, query
