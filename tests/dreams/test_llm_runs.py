"""The LLM engine through the whole pipeline, against the loopback OpenAI-compatible server."""

from __future__ import annotations

import itertools
import uuid
from dataclasses import replace
from functools import partial

import pytest
from sqlalchemy import func, select

from elephantasm.db.models import Event, IdentityVersion, Knowledge, Memory
from elephantasm.llm.client import build_client
from elephantasm.llm.distiller import LLMEngine
from elephantasm.llm.factory import build_dream_engine
from elephantasm.runtime import Runtime
from elephantasm.services.dreams import run_dream
from tests.conftest import Tenant
from tests.dreams.helpers import add_events, claimed_count, live_provenance, new_anima, pending_ids, turns, variant
from tests.support.openai_server import OpenAIServer, Reply, Status, distill_reply, empty, malformed, rate_limited, slow

TEXTS = [
    "Hi, I live in Paris.",
    "Hello! Paris is great.",
    "Planning a picnic on Sunday.",
    "Bring a blanket.",
    "Actually I moved to Berlin.",
    "Berlin then!",
    "My favorite color is teal.",
    "Teal is nice.",
]


def engine(server: OpenAIServer, timeout: float = 5.0) -> LLMEngine:
    client = build_client(server.base_url, None, timeout=timeout)
    return LLMEngine(client, "test-model", max_retries=3, timeout=timeout, backoff_base=0.01, backoff_max=0.05)


async def _setup(runtime: Runtime, tenant: Tenant, n: int = 8) -> tuple[uuid.UUID, list[Event]]:
    anima_id = await new_anima(runtime, tenant.org_id)
    texts = (TEXTS * (n // len(TEXTS) + 1))[:n]
    return anima_id, await add_events(runtime, tenant.org_id, anima_id, turns(texts))


async def _count(runtime: Runtime, model, anima_id: uuid.UUID) -> int:  # type: ignore[no-untyped-def]
    async with runtime.read_session() as session:
        stmt = select(func.count()).select_from(model).where(model.anima_id == anima_id)
        return (await session.execute(stmt)).scalar_one()


async def test_llm_run_writes_memories_knowledge_identity(
    runtime: Runtime, tenant: Tenant, openai_server: OpenAIServer
) -> None:
    anima_id, events = await _setup(runtime, tenant)
    run = await run_dream(replace(runtime.dreams, distiller=engine(openai_server)), tenant.org_id, anima_id)
    assert run.status == "completed", run.error
    assert (run.engine, run.model) == ("llm", "test-model")
    assert run.llm_calls == len(openai_server.chat_requests) == 1
    assert run.prompt_tokens > 0 and run.completion_tokens > 0
    prov = await live_provenance(runtime, anima_id)
    assert sorted(e for ids in prov.values() for e in ids) == sorted(e.id for e in events)
    async with runtime.read_session() as session:
        homes = list(
            (
                await session.execute(
                    select(Knowledge)
                    .where(Knowledge.anima_id == anima_id, Knowledge.subject_key == "user.home_city")
                    .order_by(Knowledge.valid_from)
                )
            ).scalars()
        )
        (version,) = (
            await session.execute(select(IdentityVersion).where(IdentityVersion.anima_id == anima_id))
        ).scalars()
    assert [(k.meta["value"], k.valid_to is None) for k in homes] == [("Paris", False), ("Berlin", True)]
    assert version.personality_type == "Helpful Guide" and version.reason and version.run_id == run.id


async def test_settings_pick_the_llm_engine(runtime: Runtime, tenant: Tenant, openai_server: OpenAIServer) -> None:
    rt = variant(runtime, llm_base_url=openai_server.base_url, llm_model="m-1")
    rt.dream_engine = build_dream_engine(rt.settings)
    anima_id, _ = await _setup(runtime, tenant, 4)
    run = await run_dream(rt.dreams, tenant.org_id, anima_id)
    assert (run.status, run.engine, run.model, run.llm_calls) == ("completed", "llm", "m-1", 1)
    assert openai_server.chat_requests[0].body["model"] == "m-1"


@pytest.mark.parametrize("bad", [Status(500), malformed(), empty()], ids=["500", "malformed", "empty"])
async def test_llm_failure_leaves_events_pending_with_the_error_recorded(
    runtime: Runtime,
    tenant: Tenant,
    openai_server: OpenAIServer,
    bad,  # type: ignore[no-untyped-def]
) -> None:
    anima_id, events = await _setup(runtime, tenant)
    openai_server.script(*[bad] * 4)  # the first attempt and all three retries
    run = await run_dream(replace(runtime.dreams, distiller=engine(openai_server)), tenant.org_id, anima_id)
    assert run.status == "failed" and "distillation failed" in run.error and "4 attempts" in run.error
    assert run.llm_calls == 4 and run.events_read == 0 and run.memories_created == 0
    assert await pending_ids(runtime, anima_id) == {e.id for e in events}
    assert await _count(runtime, Memory, anima_id) == 0 and await _count(runtime, Knowledge, anima_id) == 0
    assert await claimed_count(runtime, anima_id) == 0  # released: the next run can take them

    retry = await run_dream(replace(runtime.dreams, distiller=engine(openai_server)), tenant.org_id, anima_id)
    assert retry.status == "completed" and retry.events_read == len(events)
    assert await pending_ids(runtime, anima_id) == set()


async def test_transient_llm_trouble_is_absorbed(runtime: Runtime, tenant: Tenant, openai_server: OpenAIServer) -> None:
    """Malformed, empty, 500, 429 with Retry-After and a too-slow reply are retried; the run completes."""
    anima_id, events = await _setup(runtime, tenant)
    llm = LLMEngine(
        build_client(openai_server.base_url, None, timeout=0.5),
        "test-model",
        max_retries=5,
        timeout=0.5,
        backoff_base=0.01,
        backoff_max=0.05,
    )
    openai_server.script(malformed(), empty(), Status(500), rate_limited(0.3), slow(2.0))
    run = await run_dream(replace(runtime.dreams, distiller=llm), tenant.org_id, anima_id)
    assert run.status == "completed", run.error
    assert run.llm_calls == 6 and run.events_read == len(events)
    gaps = [b.received_at - a.received_at for a, b in itertools.pairwise(openai_server.chat_requests)]
    assert gaps[3] >= 0.28  # the 429's Retry-After was honoured


async def test_failure_in_a_later_chunk_keeps_earlier_chunks_whole(
    runtime: Runtime, tenant: Tenant, openai_server: OpenAIServer
) -> None:
    anima_id, events = await _setup(runtime, tenant, 16)
    rt = variant(runtime, dreamer_chunk_events=8)
    openai_server.script(Reply(), *[Status(503)] * 4)
    run = await run_dream(replace(rt.dreams, distiller=engine(openai_server)), tenant.org_id, anima_id)
    assert run.status == "failed" and run.events_read == 8 and run.llm_calls == 5
    assert await pending_ids(runtime, anima_id) == {e.id for e in events[8:]}
    prov = await live_provenance(runtime, anima_id)
    assert sorted(e for ids in prov.values() for e in ids) == sorted(e.id for e in events[:8])


async def test_events_the_llm_left_out_get_an_offline_memory(
    runtime: Runtime, tenant: Tenant, openai_server: OpenAIServer
) -> None:
    anima_id, events = await _setup(runtime, tenant)
    openai_server.script(Reply(partial(distill_reply, skip=frozenset({2, 3}))))
    run = await run_dream(replace(runtime.dreams, distiller=engine(openai_server)), tenant.org_id, anima_id)
    assert run.status == "completed" and run.counts["fallback_events"] == 2
    prov = await live_provenance(runtime, anima_id)
    assert sorted(e for ids in prov.values() for e in ids) == sorted(e.id for e in events)
