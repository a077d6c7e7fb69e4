"""Keys can't escalate (issue 11, item 5): scopes, minting limits, revocation evicts the auth cache,
key-creation races are 409s."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import datetime, timedelta

import httpx
import pytest

from elephantasm.runtime import Runtime
from elephantasm.services.keys import create_key
from tests.conftest import Tenant


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def mint(client: httpx.AsyncClient, headers: dict[str, str], **body: object) -> httpx.Response:
    return await client.post("/api/keys", json=body, headers=headers)


async def test_existing_keys_are_admin_and_admin_mints_narrower_keys(client: httpx.AsyncClient, tenant: Tenant) -> None:
    listed = (await client.get("/api/keys", headers=tenant.headers)).json()["items"]
    assert [k["scope"] for k in listed] == ["admin"]
    default = await mint(client, tenant.headers, name="same")
    assert default.status_code == 201 and default.json()["scope"] == "admin"
    for scope in ("write", "read"):
        r = await mint(client, tenant.headers, scope=scope)
        assert r.status_code == 201 and r.json()["scope"] == scope
        assert r.json()["created_by"] == listed[0]["id"]
    bad = await mint(client, tenant.headers, scope="root")
    assert bad.status_code == 422 and "scope" in str(bad.json()["detail"])


async def test_read_keys_cannot_write(client: httpx.AsyncClient, tenant: Tenant, anima: dict) -> None:
    read = bearer((await mint(client, tenant.headers, scope="read")).json()["key"])
    assert (await client.get("/api/animas", headers=read)).status_code == 200
    assert (await client.get(f"/api/animas/{anima['id']}/memory-packs/latest", headers=read)).status_code == 200
    search = {"anima_id": anima["id"], "query": "anything"}
    assert (await client.post("/api/memories/search/semantic", json=search, headers=read)).status_code == 200
    assert (await client.post("/api/knowledge/search/semantic", json=search, headers=read)).status_code == 200
    assert (await client.post("/api/packs/compile", json={"anima_id": anima["id"]}, headers=read)).status_code == 200
    writes = [
        client.post("/api/animas", json={"name": "x"}, headers=read),
        client.patch(f"/api/animas/{anima['id']}", json={"name": "y"}, headers=read),
        client.delete(f"/api/animas/{anima['id']}", headers=read),
        client.post(
            "/api/events", json={"anima_id": anima["id"], "event_type": "system", "content": "c"}, headers=read
        ),
        client.post("/api/dreams/trigger", json={"anima_id": anima["id"]}, headers=read),
        client.post("/api/animas/import", content=b"", headers=read),
    ]
    for response in await asyncio.gather(*writes):
        assert response.status_code == 403, response.text
        assert "write" in response.json()["detail"]
    assert (await client.get(f"/api/animas/{anima['id']}", headers=tenant.headers)).json()["name"] == anima["name"]


async def test_only_admin_keys_manage_keys(client: httpx.AsyncClient, tenant: Tenant) -> None:
    admin_row = (await client.get("/api/keys", headers=tenant.headers)).json()["items"][0]
    for scope in ("write", "read"):
        key = bearer((await mint(client, tenant.headers, scope=scope)).json()["key"])
        for response in (
            await client.get("/api/keys", headers=key),
            await mint(client, key, scope="read"),
            await mint(client, key, scope="admin"),
            await client.delete(f"/api/keys/{admin_row['id']}", headers=key),
        ):
            assert response.status_code == 403 and "admin" in response.json()["detail"], response.text
    assert (await client.get("/api/animas", headers=tenant.headers)).status_code == 200  # sibling not revoked


async def test_a_minted_key_lives_no_longer_than_its_minter(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    expires = (runtime.clock() + timedelta(days=1)).replace(microsecond=0)
    async with runtime.unit_of_work() as session:
        short = await create_key(session, runtime.secret, tenant.org_name, "short", expires)
    h = bearer(short.key)
    none = await mint(client, h)
    assert none.status_code == 201 and datetime.fromisoformat(none.json()["expires_at"]) == expires  # inherited
    later = await mint(client, h, expires_at=(expires + timedelta(seconds=1)).isoformat())
    assert later.status_code == 403 and "expires_at" in later.json()["detail"]
    sooner = await mint(client, h, expires_at=(expires - timedelta(hours=1)).isoformat())
    assert sooner.status_code == 201


async def _cached_app(runtime: Runtime, clock: list[datetime]) -> httpx.AsyncClient:
    from api.app import create_app

    rt = dataclasses.replace(
        runtime, settings=runtime.settings.model_copy(update={"auth_cache_seconds": 300}), clock=lambda: clock[0]
    )
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(rt)), base_url="http://cached")


async def test_revocation_evicts_the_key_from_the_auth_cache_at_once(runtime: Runtime, tenant: Tenant) -> None:
    clock = [runtime.clock()]
    async with await _cached_app(runtime, clock) as client:
        victim = (await mint(client, tenant.headers, scope="read")).json()
        assert (await client.get("/api/animas", headers=bearer(victim["key"]))).status_code == 200  # now cached
        assert (await client.delete(f"/api/keys/{victim['id']}", headers=tenant.headers)).status_code == 204
        r = await client.get("/api/animas", headers=bearer(victim["key"]))
        assert r.status_code == 401 and "detail" in r.json()


async def test_a_cached_key_stops_working_when_it_expires(runtime: Runtime, tenant: Tenant) -> None:
    clock = [runtime.clock()]
    async with await _cached_app(runtime, clock) as client:
        expiring = (await mint(client, tenant.headers, expires_at=(clock[0] + timedelta(minutes=1)).isoformat())).json()
        assert (await client.get("/api/animas", headers=bearer(expiring["key"]))).status_code == 200
        clock[0] += timedelta(minutes=2)  # well inside the cache's 300 s, past the key's expiry
        assert (await client.get("/api/animas", headers=bearer(expiring["key"]))).status_code == 401


async def test_concurrent_key_creation_for_a_new_org_never_fails(runtime: Runtime) -> None:
    import uuid

    name = f"race-{uuid.uuid4().hex[:8]}"

    async def one() -> uuid.UUID:
        async with runtime.unit_of_work() as session:
            return (await create_key(session, runtime.secret, name)).org_id

    orgs = await asyncio.gather(*(one() for _ in range(6)))
    assert len(set(orgs)) == 1


async def test_a_key_creation_race_is_409(
    client: httpx.AsyncClient, tenant: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    import elephantasm.services.keys as keys

    fixed = keys.generate_api_key()
    monkeypatch.setattr(keys, "generate_api_key", lambda: fixed)  # two mints racing to one key hash
    assert (await mint(client, tenant.headers)).status_code == 201
    r = await mint(client, tenant.headers)
    assert r.status_code == 409 and "detail" in r.json() and fixed not in r.text


async def test_cli_creates_scoped_keys(pg_url: str, data_dir, client: httpx.AsyncClient) -> None:  # type: ignore[no-untyped-def]
    import re
    import uuid

    from tests.lifecycle.test_purge import run_cli

    org = f"cli-scope-{uuid.uuid4().hex[:8]}"
    done = run_cli(pg_url, data_dir, "keys", "create", "--org", org, "--scope", "read")
    assert done.returncode == 0, done.stderr
    key = re.search(r"ELEPHANTASM_API_KEY=(sk_live_\S+)", done.stdout).group(1)  # type: ignore[union-attr]
    assert (await client.get("/api/animas", headers=bearer(key))).status_code == 200
    assert (await client.post("/api/animas", json={"name": "n"}, headers=bearer(key))).status_code == 403
    assert "read" in run_cli(pg_url, data_dir, "keys", "list", "--org", org).stdout
