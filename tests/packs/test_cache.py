"""The pack snapshot cache: hits are byte-identical, any write misses, replicas share snapshots."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from datetime import timedelta

import httpx
from sqlalchemy import text

from api.app import create_app
from elephantasm.domain.fingerprint import PACK_FORMAT_VERSION
from elephantasm.domain.presets import get_preset
from elephantasm.runtime import Runtime
from elephantasm.services import packs as svc
from elephantasm.services.packs import PackState
from elephantasm.services.packs.cache import CachedPack, SnapshotLRU
from elephantasm.services.packs.keys import PackRequest, pack_key_inputs, snapshot_key
from tests.conftest import Tenant
from tests.packs.conftest import FROZEN_NOW
from tests.packs.helpers import add_memory, extract, latest
from tests.support.pack_keys import cache_key, pack_inputs


def _stats(rt: Runtime) -> tuple[int, int, int, int]:
    m = rt.pack_state.metrics
    return m.memory_hits, m.shared_hits, m.misses, m.compiles


async def test_repeated_latest_is_a_hit_with_identical_bytes(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    await extract(pclient, tenant, panima["id"], "the sky is green today")
    first = await latest(pclient, tenant, panima["id"], query="sky colour")
    again = [await latest(pclient, tenant, panima["id"], query="  sky   colour ") for _ in range(3)]
    assert all(r.content == first.content and r.headers["etag"] == first.headers["etag"] for r in again)
    assert _stats(pack_runtime) == (3, 0, 1, 1)


async def test_any_write_makes_the_next_latest_a_miss(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    await extract(pclient, tenant, panima["id"], "first words")
    seen = {(await latest(pclient, tenant, panima["id"])).json()["fingerprint"]}

    async def changed() -> None:
        pack = (await latest(pclient, tenant, panima["id"])).json()
        assert pack["fingerprint"] not in seen
        seen.add(pack["fingerprint"])

    await extract(pclient, tenant, panima["id"], "more words")
    await changed()
    r = await pclient.patch(f"/api/animas/{panima['id']}", json={"name": "renamed"}, headers=tenant.headers)
    assert r.status_code == 200
    await changed()
    await add_memory(pack_runtime, tenant, panima["id"], "a distilled memory", time_end=FROZEN_NOW)
    await changed()
    misses, compiles = pack_runtime.pack_state.metrics.misses, pack_runtime.pack_state.metrics.compiles
    assert (misses, compiles) == (4, 4)


async def test_replicas_share_snapshots_through_postgres(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    """A second API process (its own LRU) serves the first one's snapshot, byte for byte."""
    await extract(pclient, tenant, panima["id"], "shared memory")
    first = await latest(pclient, tenant, panima["id"])
    replica = dataclasses.replace(pack_runtime, pack_state=PackState())
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(replica)), base_url="http://r") as c:
        second = await latest(c, tenant, panima["id"])
        third = await latest(c, tenant, panima["id"])
    assert second.content == third.content == first.content
    assert _stats(replica) == (1, 1, 0, 0)


async def test_recompiling_without_any_cache_gives_the_same_pack(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    """Determinism: same state, query and config → same fingerprint, id and bytes of content."""
    for i in range(5):
        await extract(
            pclient,
            tenant,
            panima["id"],
            f"note {i} about the budget",
            occurred_at=(FROZEN_NOW - timedelta(minutes=i)).isoformat(),
        )
    await add_memory(pack_runtime, tenant, panima["id"], "budget was approved", time_end=FROZEN_NOW - timedelta(days=1))
    req = svc.build_request(pack_runtime.packs, tenant.org_id, uuid.UUID(panima["id"]), query="budget")
    a = await svc.compile_pack(pack_runtime.packs, req)
    b = await svc.compile_pack(pack_runtime.packs, req)
    assert (a.fingerprint, a.pack_id, a.key) == (b.fingerprint, b.pack_id, b.key)
    assert a.pack.content.model_dump_json() == b.pack.content.model_dump_json()
    async with pack_runtime.engine.begin() as conn:
        await conn.execute(text("DELETE FROM pack_snapshots WHERE anima_id = :a"), {"a": panima["id"]})
    cold = dataclasses.replace(pack_runtime, pack_state=PackState())
    served = await svc.latest(cold.packs, req)
    assert served.etag == f'"{a.fingerprint}"' and _stats(cold) == (0, 0, 1, 1)


async def test_concurrent_misses_compile_once(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    await extract(pclient, tenant, panima["id"], "popular anima")
    responses = await asyncio.gather(*(latest(pclient, tenant, panima["id"]) for _ in range(8)))
    assert len({r.content for r in responses}) == 1
    assert pack_runtime.pack_state.metrics.compiles == 1


def test_snapshot_key_is_the_domain_cache_key() -> None:
    req = PackRequest(uuid.uuid4(), uuid.uuid4(), "what now?", get_preset("recent"), 1234, "cl100k_base", FROZEN_NOW)
    inputs = pack_key_inputs(req, 7)
    assert inputs == pack_inputs(req.anima_id, 7, req.query, req.config, 1234, "cl100k_base", FROZEN_NOW)
    assert cache_key(req.anima_id, 7, req.query, req.config, 1234, "cl100k_base", FROZEN_NOW) == (
        f"pack:v{PACK_FORMAT_VERSION}:{snapshot_key(inputs)}"
    )
    with_session = pack_key_inputs(dataclasses.replace(req, session_id="s1"), 7)
    assert snapshot_key(with_session) != snapshot_key(inputs)
    # A queried pack depends on which embedder ranked it: another embedding space is another key.
    spaced = [pack_key_inputs(dataclasses.replace(req, embedding_space=s), 7) for s in ("a/1/1", "b/1/1")]
    assert len({snapshot_key(inputs), *map(snapshot_key, spaced)}) == 3


def test_lru_is_bounded_in_bytes() -> None:
    def entry(i: int, size: int) -> CachedPack:
        return CachedPack(f"k{i}", b"x" * size, "f", uuid.uuid4(), ())

    lru = SnapshotLRU(max_bytes=10_000)
    for i in range(20):
        lru.put(entry(i, 1000))
        assert lru.bytes <= 10_000
    oldest = 20 - len(lru)  # entries k{oldest}..k19 are held
    assert oldest > 0 and lru.evictions == oldest and lru.get("k0") is None
    assert lru.get(f"k{oldest}") is not None  # now most recently used: survives the next eviction
    lru.put(entry(99, 1000))
    assert lru.get(f"k{oldest}") is not None and lru.get(f"k{oldest + 1}") is None
    lru.put(entry(100, 20_000))  # larger than the whole cache: not stored
    assert lru.get("k100") is None and lru.bytes <= 10_000
