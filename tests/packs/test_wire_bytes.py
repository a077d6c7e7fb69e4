"""A compiled pack's body is encoded from plain data (services/packs/wire.py), not from the model:
it must be exactly the bytes ``MemoryPackRead`` validation and dumping would give, every layer
present (identity with a self-reflection object, temporal, knowledge, memories, raw events) and
with small floats whose JSON forms differ between encoders (``5e-6``)."""

from __future__ import annotations

import uuid
from datetime import timedelta

import httpx

from elephantasm.runtime import Runtime
from elephantasm.schemas.packs import MemoryPackRead
from elephantasm.services import packs as svc
from elephantasm.services.packs.wire import encode
from tests.conftest import Tenant
from tests.packs.conftest import FROZEN_NOW
from tests.packs.helpers import add_knowledge, add_memory, extract, set_identity


def _model_bytes(body: bytes) -> bytes:
    return MemoryPackRead.model_validate_json(body).model_dump_json().encode()


async def test_body_is_the_models_json_byte_for_byte(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    anima = panima["id"]
    await set_identity(
        pack_runtime,
        tenant,
        anima,
        personality_type="INTP",
        communication_style="terse",
        self={"values": ["honesty"], "mood": "calm", "n": 3},
        prose="Curious and careful.",
    )
    for i in range(4):
        await extract(
            pclient,
            tenant,
            anima,
            f'we talked about the budget, item {i} — ünïcode 数据 🙂 "q"\t',
            occurred_at=(FROZEN_NOW - timedelta(minutes=i)).isoformat(),
            session_id="s1",
        )
    mid = await add_memory(
        pack_runtime,
        tenant,
        anima,
        "the budget was approved by Alice",
        time_end=FROZEN_NOW - timedelta(days=400),
        importance=0.000005,
        confidence=1.0,
    )
    await add_memory(
        pack_runtime,
        tenant,
        anima,
        "lunch with Bob on Friday",
        time_end=FROZEN_NOW - timedelta(hours=3),
        importance=0.9,
        confidence=0.1,
        session_id="s1",
    )
    await add_knowledge(pack_runtime, tenant, anima, "Alice approves budgets", memory_ids=[mid], importance=1e-6)
    org, anima_id = tenant.org_id, uuid.UUID(anima)
    requests = [
        svc.build_request(pack_runtime.packs, org, anima_id),
        svc.build_request(pack_runtime.packs, org, anima_id, query="who approved the budget?", max_tokens=4000),
        svc.build_request(pack_runtime.packs, org, anima_id, query="budget", max_tokens=200, preset="recent"),
        svc.build_request(pack_runtime.packs, org, anima_id, session_id="s1", preset="important"),
    ]
    for req in requests:
        compiled = await svc.compile_pack(pack_runtime.packs, req)
        assert compiled.body == _model_bytes(compiled.body)
        assert compiled.pack.fingerprint == compiled.fingerprint
        assert compiled.pack.id == compiled.data["id"] == compiled.pack_id


async def test_encoder_matches_the_model_on_edge_values(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    """NaN/infinite similarities (null, as pydantic writes them), tiny and negative floats, -0.0."""
    await add_memory(pack_runtime, tenant, panima["id"], "one memory", time_end=FROZEN_NOW - timedelta(days=2))
    req = svc.build_request(pack_runtime.packs, tenant.org_id, uuid.UUID(panima["id"]), query="memory")
    data = (await svc.compile_pack(pack_runtime.packs, req)).data
    (item,) = data["content"]["long_term_memories"]
    for similarity, score in [(float("nan"), 5e-6), (float("inf"), -0.0), (-float("inf"), 1e-7), (-0.25, 0.1 + 0.2)]:
        item["similarity"], item["score"] = similarity, score
        item["breakdown"] = {**item["breakdown"], "relevance": score / 3}
        assert encode(data) == MemoryPackRead.model_validate(data).model_dump_json().encode()
