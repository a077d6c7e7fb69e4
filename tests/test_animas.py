"""Anima CRUD through the API on real Postgres."""

from __future__ import annotations

import httpx

from tests.conftest import Tenant


async def test_create_read_update_delete(client: httpx.AsyncClient, tenant: Tenant) -> None:
    h = tenant.headers
    r = await client.post("/api/animas", json={"name": "Ada", "description": "helper", "meta": {"k": 1}}, headers=h)
    assert r.status_code == 201, r.text
    created = r.json()
    assert created["name"] == "Ada" and created["meta"] == {"k": 1} and created["user_id"] is None
    anima_id = created["id"]

    r = await client.get(f"/api/animas/{anima_id}", headers=h)
    assert r.status_code == 200 and r.json()["description"] == "helper"

    r = await client.patch(f"/api/animas/{anima_id}", json={"name": "Ada L."}, headers=h)
    assert r.status_code == 200
    assert r.json()["name"] == "Ada L." and r.json()["description"] == "helper"
    assert r.json()["state_version"] > created["state_version"]

    r = await client.delete(f"/api/animas/{anima_id}", headers=h)
    assert r.status_code == 204
    r = await client.get(f"/api/animas/{anima_id}", headers=h)
    assert r.status_code == 404 and "not found" in r.json()["detail"]


async def test_list_paginates_every_anima_once(client: httpx.AsyncClient, tenant: Tenant) -> None:
    h = tenant.headers
    names = {f"a{i}" for i in range(7)}
    for name in sorted(names):
        assert (await client.post("/api/animas", json={"name": name}, headers=h)).status_code == 201
    seen: list[str] = []
    cursor = None
    while True:
        params = {"limit": 3} | ({"cursor": cursor} if cursor else {})
        page = (await client.get("/api/animas", params=params, headers=h)).json()
        seen += [a["name"] for a in page["items"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert sorted(seen) == sorted(names) and len(seen) == len(names)
