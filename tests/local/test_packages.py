"""Memory packages: export with a measured certificate, import on a second server's data dir,
verify there; tampering, another secret and another model are refused."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from elephantasm.domain.kv.package import open_package, seal_package
from elephantasm.runtime import Runtime, build_runtime
from elephantasm.services.kv import snapshots
from elephantasm.services.kv.prefix import pack_prompt
from elephantasm.settings import Settings
from tests.conftest import Tenant, make_tenant
from tests.local.conftest import seed_anima


@pytest.fixture
async def second_server(
    settings: Settings, pg_url: str, tmp_path: Path
) -> AsyncIterator[tuple[Runtime, httpx.AsyncClient]]:
    """Another server process's view: its own data dir and snapshot store, the same server secret."""
    from api.app import create_app

    other = tmp_path / "server-b"
    other.mkdir()
    rt = build_runtime(settings.model_copy(update={"data_dir": other}), database_url=pg_url)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(rt)), base_url="http://b") as c:
        yield rt, c
    await rt.close()


async def _snapshot_id(client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, anima_id: str) -> str:
    await seed_anima(client, tenant.headers, anima_id, n=8)
    pack = await pack_prompt(runtime.chat_packs, tenant.org_id, uuid.UUID(anima_id), "what do you know about me?")
    _, row = await snapshots.build(
        runtime.unit_of_work, runtime.local, runtime.clock, tenant.org_id, uuid.UUID(anima_id), pack
    )
    assert row is not None
    return str(row.id)


async def test_export_import_verify_round_trip(
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    other_tenant: Tenant,
    anima: dict,
    second_server: tuple[Runtime, httpx.AsyncClient],
) -> None:
    sid = await _snapshot_id(client, runtime, tenant, anima["id"])
    assert (await client.get(f"/api/kv-snapshots/{sid}/package", headers=other_tenant.headers)).status_code == 404
    assert (await client.get(f"/api/kv-snapshots/{sid}", headers=other_tenant.headers)).status_code == 404
    listed = (await client.get("/api/kv-snapshots", params={"anima_id": anima["id"]}, headers=tenant.headers)).json()
    assert [s["id"] for s in listed] == [sid] and listed[0]["summary"].startswith("0 knowledge items")
    r = await client.get(f"/api/kv-snapshots/{sid}/package", params={"probes": 1}, headers=tenant.headers)
    assert r.status_code == 200, r.text
    package = r.content
    manifest, cert, _ = open_package(package, runtime.secret)
    assert cert["greedy_identical"] and cert["grade"] == "A" and cert["probes"] == 1
    assert cert["top1_agreement"] == 1.0 and cert["mean_kl"] < 1e-3
    assert manifest["n_tokens"] > 100 and manifest["kv_type"] == "f16" and manifest["layer_counts"]["long_term"] > 0

    rt_b, client_b = second_server
    tenant_b = await make_tenant(rt_b, "server-b")
    anima_b = (await client_b.post("/api/animas", json={"name": "moved"}, headers=tenant_b.headers)).json()
    r = await client_b.post(
        "/api/kv-packages",
        params={"anima_id": anima_b["id"]},
        content=package,
        headers={**tenant_b.headers, "content-type": "application/octet-stream"},
    )
    assert r.status_code == 201, r.text
    imported = r.json()["snapshot"]
    assert imported["source"] == "imported" and imported["n_tokens"] == manifest["n_tokens"]
    store_b = rt_b.local.store
    assert store_b.path(tenant_b.org_id, imported["sha256"]).is_file()
    assert str(store_b.root).startswith(str(rt_b.settings.data_dir))
    r = await client_b.post(
        f"/api/kv-snapshots/{imported['id']}/verify", params={"probes": 1}, headers=tenant_b.headers
    )
    assert r.status_code == 200 and r.json()["greedy_identical"] is True

    damaged = bytearray(package)
    damaged[len(damaged) // 2] ^= 0x01
    r = await client_b.post(
        "/api/kv-packages", params={"anima_id": anima_b["id"]}, content=bytes(damaged), headers=tenant_b.headers
    )
    assert r.status_code == 422 and "package rejected" in r.json()["detail"]
    forged = seal_package(
        {**manifest, "model_digest": "0" * 64}, cert, open_package(package, runtime.secret)[2], runtime.secret
    )
    r = await client_b.post(
        "/api/kv-packages", params={"anima_id": anima_b["id"]}, content=forged, headers=tenant_b.headers
    )
    assert r.status_code == 422 and "identical models only" in r.json()["detail"]
    r = await client_b.post(
        "/api/kv-packages", params={"anima_id": anima["id"]}, content=package, headers=tenant_b.headers
    )
    assert r.status_code == 404, "another org's anima"

    assert (await client.delete(f"/api/kv-snapshots/{sid}", headers=other_tenant.headers)).status_code == 404
    assert (await client.delete(f"/api/kv-snapshots/{sid}", headers=tenant.headers)).status_code == 204
    assert (await client.get(f"/api/kv-snapshots/{sid}", headers=tenant.headers)).status_code == 404


async def test_package_signed_by_another_secret_is_refused(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, anima: dict
) -> None:
    stranger = seal_package({"model_digest": "x"}, {"grade": "A"}, b"kv", b"another-server-secret")
    r = await client.post(
        "/api/kv-packages", params={"anima_id": anima["id"]}, content=stranger, headers=tenant.headers
    )
    assert r.status_code == 422 and "signature" in r.json()["detail"]
    r = await client.post("/api/kv-packages", params={"anima_id": anima["id"]}, content=b"", headers=tenant.headers)
    assert r.status_code == 422
