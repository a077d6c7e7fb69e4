"""API keys: keyed hashes only, revocation and expiry."""

from __future__ import annotations

from datetime import timedelta

import httpx
from sqlalchemy import select

from elephantasm.db.models import ApiKey
from elephantasm.services.keys import create_key, revoke_key
from tests.conftest import Tenant


async def test_key_is_stored_only_as_keyed_hash(runtime, tenant: Tenant) -> None:  # type: ignore[no-untyped-def]
    async with runtime.read_session() as session:
        rows = (await session.execute(select(ApiKey).where(ApiKey.org_id == tenant.org_id))).scalars().all()
    assert len(rows) == 1
    row = rows[0]
    assert tenant.api_key.startswith("sk_live_")
    assert row.key_hash != tenant.api_key and tenant.api_key not in row.key_hash
    assert tenant.api_key.startswith(row.prefix) and len(row.prefix) < len(tenant.api_key) // 2


async def test_revoked_key_is_401(client: httpx.AsyncClient, runtime, tenant: Tenant) -> None:  # type: ignore[no-untyped-def]
    assert (await client.get("/api/animas", headers=tenant.headers)).status_code == 200
    async with runtime.unit_of_work() as session:
        await revoke_key(session, tenant.api_key[:14], tenant.org_id)
    r = await client.get("/api/animas", headers=tenant.headers)
    assert r.status_code == 401 and "revoked" in r.json()["detail"]


async def test_expired_key_is_401(client: httpx.AsyncClient, runtime) -> None:  # type: ignore[no-untyped-def]
    async with runtime.unit_of_work() as session:
        issued = await create_key(
            session, runtime.secret, "expiring-org", expires_at=runtime.clock() - timedelta(seconds=1)
        )
    r = await client.get("/api/animas", headers={"Authorization": f"Bearer {issued.key}"})
    assert r.status_code == 401


async def test_two_keys_of_one_org_see_the_same_data(client: httpx.AsyncClient, runtime, tenant: Tenant) -> None:  # type: ignore[no-untyped-def]
    async with runtime.unit_of_work() as session:
        second = await create_key(session, runtime.secret, tenant.org_name)
    created = (await client.post("/api/animas", json={"name": "shared"}, headers=tenant.headers)).json()
    r = await client.get(f"/api/animas/{created['id']}", headers={"Authorization": f"Bearer {second.key}"})
    assert r.status_code == 200 and r.json()["name"] == "shared"
