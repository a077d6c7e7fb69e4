"""``/v1/chat/completions`` with the ``openai`` client against the local model: the pack is the
memory, its KV state is restored on an unchanged pack, both turns are recorded, replay is exact."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from openai import AsyncOpenAI, NotFoundError, UnprocessableEntityError

from elephantasm.local.engine import LocalEngine
from elephantasm.local.sampling import Sampling
from elephantasm.runtime import Runtime, build_runtime
from elephantasm.services.kv.chat import ChatPlan
from elephantasm.services.kv.streaming import ChatStream
from elephantasm.settings import Settings
from tests.conftest import Tenant
from tests.local.conftest import seed_anima

QUESTION = [{"role": "user", "content": "Which city do I live in?"}]


def _openai(app, tenant: Tenant) -> AsyncOpenAI:  # type: ignore[no-untyped-def]
    transport = httpx.ASGITransport(app=app)
    return AsyncOpenAI(
        base_url="http://test/v1",
        api_key=tenant.api_key,
        http_client=httpx.AsyncClient(transport=transport, base_url="http://test/v1"),
    )


async def _events(client: httpx.AsyncClient, tenant: Tenant, anima_id: str) -> list[dict]:
    r = await client.get("/api/events", params={"anima_id": anima_id, "limit": 100}, headers=tenant.headers)
    assert r.status_code == 200, r.text
    return [e for e in r.json()["items"] if (e.get("meta") or {}).get("source") == "chat"]


async def test_chat_records_turns_hits_snapshot_and_replays(
    app,
    client: httpx.AsyncClient,
    tenant: Tenant,
    anima: dict,  # type: ignore[no-untyped-def]
) -> None:
    await seed_anima(client, tenant.headers, anima["id"])
    oa = _openai(app, tenant)
    first = await oa.chat.completions.with_raw_response.create(
        model="local", messages=QUESTION, user=anima["id"], temperature=0, max_tokens=24
    )
    assert first.headers["x-elephantasm-kv"] == "miss"
    assert len(first.headers["x-elephantasm-pack"]) == 64
    reply = first.parse()
    text = reply.choices[0].message.content
    assert text and reply.usage and reply.usage.prompt_tokens > 100

    turns = await _events(client, tenant, anima["id"])
    assert sorted((e["role"], e["event_type"]) for e in turns) == [("assistant", "message.out"), ("user", "message.in")]
    assert {e["content"] for e in turns} == {QUESTION[0]["content"], text}
    assert all(e["dedupe_key"].startswith("chat:") for e in turns)

    second = await oa.chat.completions.with_raw_response.create(
        model="local", messages=QUESTION, user=anima["id"], temperature=0, max_tokens=24
    )
    assert second.headers["x-elephantasm-kv"] == "hit", "the pack is unchanged: its KV state is restored"
    assert second.parse().choices[0].message.content == text
    assert len(await _events(client, tenant, anima["id"])) == 2, "a repeated turn is recorded once"

    follow_up = [*QUESTION, {"role": "assistant", "content": text}, {"role": "user", "content": "And my cat?"}]
    third = await oa.chat.completions.with_raw_response.create(
        model="local", messages=follow_up, user=anima["id"], temperature=0, max_tokens=8
    )
    assert third.headers["x-elephantasm-kv"] == "hit", "same conversation, same pack: the prefix is reused"
    assert third.headers["x-elephantasm-pack"] != first.headers["x-elephantasm-pack"], "recorded turns moved it"

    sampled = await oa.chat.completions.with_raw_response.create(
        model="local", messages=QUESTION, user=anima["id"], temperature=0.9, top_p=0.95, seed=7, max_tokens=16
    )
    gen_id = sampled.headers["x-elephantasm-generation"]
    r = await client.post(f"/api/generations/{gen_id}/replay", headers=tenant.headers)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["identical"] and body["prompt_identical"] and body["kv"] == "hit"
    assert body["output"] == sampled.parse().choices[0].message.content
    g = await client.get(f"/api/generations/{gen_id}", headers=tenant.headers)
    assert g.json()["seed"] == 7 and g.json()["sampling"]["temperature"] == 0.9


async def test_streaming_with_the_header_anima(
    app,
    client: httpx.AsyncClient,
    tenant: Tenant,
    anima: dict,  # type: ignore[no-untyped-def]
) -> None:
    await seed_anima(client, tenant.headers, anima["id"])
    oa = _openai(app, tenant)
    raw = await oa.chat.completions.with_raw_response.create(
        model="local",
        messages=[{"role": "user", "content": "Do I have a pet?"}],
        stream=True,
        temperature=0,
        max_tokens=16,
        extra_headers={"X-Elephantasm-Anima": anima["id"]},
    )
    assert raw.headers["x-elephantasm-kv"] in {"hit", "miss"}
    assert raw.headers["content-type"].startswith("text/event-stream")
    pieces, finish = [], None
    async for chunk in raw.parse():
        if chunk.choices and chunk.choices[0].delta.content:
            pieces.append(chunk.choices[0].delta.content)
        if chunk.choices and chunk.choices[0].finish_reason:
            finish = chunk.choices[0].finish_reason
    assert pieces and finish in {"stop", "length"}
    turns = await _events(client, tenant, anima["id"])
    assert {e["content"] for e in turns} == {"Do I have a pet?", "".join(pieces)}


async def test_models_auth_and_isolation(
    app,
    client: httpx.AsyncClient,
    tenant: Tenant,
    other_tenant: Tenant,
    anima: dict,  # type: ignore[no-untyped-def]
) -> None:
    models = await _openai(app, tenant).models.list()
    assert [m.id for m in models.data] == ["SmolLM2-135M-Instruct.Q4_1"]
    with pytest.raises(NotFoundError):
        await _openai(app, other_tenant).chat.completions.create(model="local", messages=QUESTION, user=anima["id"])
    with pytest.raises(UnprocessableEntityError) as missing:
        await _openai(app, tenant).chat.completions.create(model="local", messages=QUESTION)
    assert "X-Elephantasm-Anima" in missing.value.response.json()["detail"]
    r = await client.post("/v1/chat/completions", json={"messages": QUESTION, "user": anima["id"]})
    assert r.status_code == 401
    r = await client.post(
        "/v1/chat/completions",
        headers=tenant.headers,
        json={"messages": [{"role": "assistant", "content": "hi"}], "user": anima["id"]},
    )
    assert r.status_code == 422 and "last message" in r.json()["detail"]


@pytest.fixture
async def missing_model_app(settings: Settings, pg_url: str, tmp_path: Path) -> AsyncIterator[object]:
    from api.app import create_app

    broken = settings.model_copy(update={"local_model_path": tmp_path / "absent.gguf"})
    rt: Runtime = build_runtime(broken, database_url=pg_url)
    yield create_app(rt)
    await rt.close()


async def test_missing_model_is_503_naming_the_setting(missing_model_app, tenant: Tenant, anima: dict) -> None:  # type: ignore[no-untyped-def]
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=missing_model_app), base_url="http://t") as c:
        r = await c.post(
            "/v1/chat/completions", headers=tenant.headers, json={"messages": QUESTION, "user": anima["id"]}
        )
    assert r.status_code == 503
    assert "ELEPHANTASM_LOCAL_MODEL_PATH" in r.json()["detail"]


async def _stream(
    runtime: Runtime, engine: LocalEngine, tenant: Tenant, anima_id: str, messages: list, sampling: Sampling
) -> tuple[ChatPlan, ChatStream]:
    """A planned turn and its stream, as the route makes them."""
    from elephantasm.services.kv.chat import plan_chat
    from elephantasm.services.kv.streaming import chat_stream

    packs, args = runtime.chat_packs, (tenant.org_id, uuid.UUID(anima_id), messages, sampling, None)
    plan = await plan_chat(packs, runtime.read_session, runtime.local, engine, *args)
    return plan, chat_stream(runtime.unit_of_work, runtime.local, packs, runtime.clock, engine, plan)


async def test_a_stream_cut_short_stops_the_model_and_still_records_the_turn(
    app,
    client: httpx.AsyncClient,
    runtime: Runtime,
    tenant: Tenant,
    anima: dict,  # type: ignore[no-untyped-def]
) -> None:
    """What a disconnecting client leaves behind: the server stops iterating the stream early."""
    await seed_anima(client, tenant.headers, anima["id"])
    engine = await runtime.local.aengine()
    question = [{"role": "user", "content": "Tell me a long story about my garden."}]
    sampling = Sampling(seed=3, temperature=0.8, top_p=0.95, max_tokens=400)
    plan, stream = await _stream(runtime, engine, tenant, anima["id"], question, sampling)
    await stream.start()
    pieces = stream.pieces()
    first = await anext(pieces)
    await pieces.aclose()  # the client went away after one piece
    await stream.finished()

    assert engine.lock.acquire(blocking=False), "the model is free again"
    engine.lock.release()
    gen = (await client.get(f"/api/generations/{plan.generation_id}", headers=tenant.headers)).json()
    assert gen["finish_reason"] == "cancelled" and gen["output"].startswith(first)
    assert 0 < gen["output_tokens"] < 400, "generation stopped early instead of running to max_tokens"
    turns = await _events(client, tenant, anima["id"])
    assert {e["content"] for e in turns} == {question[0]["content"], gen["output"]}

    r = await client.post(f"/api/generations/{plan.generation_id}/replay", headers=tenant.headers)
    assert r.status_code == 200 and r.json()["identical"], "replay covers the tokens the client got"


async def test_a_failed_generation_still_stores_what_the_user_sent(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, anima: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The turn is recorded after the reply; when there is no reply, the user's message is stored
    before the error reaches the client (plain and streamed)."""
    await seed_anima(client, tenant.headers, anima["id"], n=4)
    engine = await runtime.local.aengine()

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the model failed mid-reply")

    monkeypatch.setattr(engine, "generate", broken)
    plain = [{"role": "user", "content": "Remember that I moved to Porto."}]
    r = await client.post(
        "/v1/chat/completions", headers=tenant.headers, json={"messages": plain, "user": anima["id"], "max_tokens": 8}
    )
    assert r.status_code == 500
    assert [e["content"] for e in await _events(client, tenant, anima["id"])] == [plain[0]["content"]]

    streamed = [{"role": "user", "content": "And that my sister is called Lena."}]
    sampling = Sampling(seed=1, temperature=0.0, max_tokens=8)
    plan, stream = await _stream(runtime, engine, tenant, anima["id"], streamed, sampling)
    await stream.start()  # the prompt is in: headers would go out now
    with pytest.raises(RuntimeError, match="mid-reply"):
        async for _ in stream.pieces():
            pass
    stored = {e["content"] for e in await _events(client, tenant, anima["id"])}
    assert stored == {plain[0]["content"], streamed[0]["content"]}
    r = await client.get(f"/api/generations/{plan.generation_id}", headers=tenant.headers)
    assert r.status_code == 404, "no generation row for a reply that never came"
