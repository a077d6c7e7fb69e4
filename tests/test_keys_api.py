"""``/api/keys``: an org manages its own keys; another org's keys are invisible."""

from __future__ import annotations

import httpx

from tests.conftest import Tenant


async def test_create_list_use_and_revoke(client: httpx.AsyncClient, tenant: Tenant) -> None:
    r = await client.post("/api/keys", json={"name": "ci"}, headers=tenant.headers)
    assert r.status_code == 201, r.text
    created = r.json()
    assert created["key"].startswith("sk_live_") and created["key"].startswith(created["prefix"])
    new_headers = {"Authorization": f"Bearer {created['key']}"}
    assert (await client.get("/api/animas", headers=new_headers)).status_code == 200

    listed = (await client.get("/api/keys", headers=tenant.headers)).json()["items"]
    assert {k["name"] for k in listed} == {None, "ci"}
    assert all("key" not in k and "key_hash" not in k for k in listed)

    assert (await client.delete(f"/api/keys/{created['id']}", headers=tenant.headers)).status_code == 204
    assert (await client.get("/api/animas", headers=new_headers)).status_code == 401
    assert (await client.delete(f"/api/keys/{created['id']}", headers=tenant.headers)).status_code == 404


async def test_other_orgs_keys_are_404_and_unlisted(
    client: httpx.AsyncClient, tenant: Tenant, other_tenant: Tenant
) -> None:
    mine = (await client.post("/api/keys", json={}, headers=tenant.headers)).json()
    r = await client.delete(f"/api/keys/{mine['id']}", headers=other_tenant.headers)
    assert r.status_code == 404
    others = (await client.get("/api/keys", headers=other_tenant.headers)).json()["items"]
    assert mine["id"] not in {k["id"] for k in others}
    assert (await client.get("/api/animas", headers={"Authorization": f"Bearer {mine['key']}"})).status_code == 200


async def test_expiry_in_the_past_is_422(client: httpx.AsyncClient, tenant: Tenant) -> None:
    r = await client.post("/api/keys", json={"expires_at": "2000-01-01T00:00:00Z"}, headers=tenant.headers)
    assert r.status_code == 422 and "expires_at" in r.json()["detail"]


async def test_last_used_at_is_recorded(client: httpx.AsyncClient, tenant: Tenant) -> None:
    created = (await client.post("/api/keys", json={"name": "fresh"}, headers=tenant.headers)).json()
    assert created["last_used_at"] is None
    assert (await client.get("/api/animas", headers={"Authorization": f"Bearer {created['key']}"})).status_code == 200
    listed = {k["id"]: k for k in (await client.get("/api/keys", headers=tenant.headers)).json()["items"]}
    assert listed[created["id"]]["last_used_at"] is not None
