"""The LLM engine against a real OpenAI-compatible server on loopback (tests/support/openai_server.py)."""

from __future__ import annotations

import time
from functools import partial

import openai
import pytest

from elephantasm.domain.dreaming import DistillEngine, DistillError, EventInput, IdentityDraft
from elephantasm.llm.client import build_client
from elephantasm.llm.distiller import LLMEngine
from tests.dreaming.factories import ev
from tests.support.openai_server import (
    OpenAIServer,
    Reply,
    Status,
    distill_reply,
    empty,
    malformed,
    rate_limited,
    slow,
)

# The lead's conftest may register this plugin too; registering a plugin twice is harmless.
pytest_plugins = ["tests.support.fixtures"]


def make_engine(server: OpenAIServer, *, timeout: float = 5.0, max_retries: int = 3) -> LLMEngine:
    client = build_client(server.base_url, None, timeout=timeout)
    return LLMEngine(
        client, "test-model", max_retries=max_retries, timeout=timeout, backoff_base=0.01, backoff_max=0.05
    )


def events(n: int = 100) -> list[EventInput]:
    texts = {4: "I live in Paris.", 60: "I moved to Berlin in March.", 30: "My favorite color is teal."}
    return [ev(i, texts.get(i, f"message {i} about the weekly plan"), session=f"s{i // 25}") for i in range(n)]


def assert_complete(result, evs: list[EventInput]) -> None:  # type: ignore[no-untyped-def]
    ids = {e.id for e in evs}
    assert {i for m in result.memories for i in m.event_ids} == ids
    assert all(set(m.event_ids) <= ids and m.event_ids for m in result.memories)
    for k in result.knowledge:
        assert set(k.source_event_ids) <= ids and k.source_memory_indices


async def test_happy_path_batches_cites_and_counts(openai_server: OpenAIServer) -> None:
    evs = events(100)
    engine = make_engine(openai_server)
    assert isinstance(engine, DistillEngine) and engine.model == "test-model"
    result = await engine.distil(evs, None)

    chats = openai_server.chat_requests
    assert 1 <= len(chats) <= 5 and result.usage.calls == len(chats)
    assert_complete(result, evs)
    assert result.fallback_event_ids == ()
    first = result.memories[0]
    assert first.event_ids == tuple(e.id for e in evs[:4]) and first.meta["engine"] == "llm"
    assert (first.time_start, first.time_end, first.session_id) == (evs[0].occurred_at, evs[3].occurred_at, "s0")

    homes = [k for k in result.knowledge if k.subject_key == "user.home_city"]
    assert [k.value for k in homes] == ["Paris", "Berlin"]
    assert homes[0].source_event_ids == (evs[4].id,)
    assert evs[4].id in result.memories[homes[0].source_memory_indices[0]].event_ids

    # every event shown exactly once; structured outputs requested; identity only on the last call
    shown = [
        line.split("]")[0]
        for r in chats
        for line in r.body["messages"][-1]["content"].splitlines()
        if line.startswith("[")
    ]
    assert sorted(shown, key=lambda s: int(s[1:])) == [f"[{i}" for i in range(100)]
    formats = [r.body["response_format"] for r in chats]
    assert all(f["type"] == "json_schema" and f["json_schema"]["strict"] for f in formats)
    asks_identity = ["identity" in f["json_schema"]["schema"]["properties"] for f in formats]
    assert asks_identity == [False] * (len(chats) - 1) + [True]
    assert result.identity is not None and result.identity.reason

    expected_prompt = sum(sum(len(m["content"]) for m in r.body["messages"]) // 4 + 1 for r in chats)
    assert result.usage.prompt_tokens == expected_prompt and result.usage.completion_tokens > 0


@pytest.mark.parametrize(
    "bad",
    [
        malformed(),
        empty(),
        Reply(lambda body: {"memories": [], "knowledge": []}),
        Reply(
            partial(
                lambda body: {
                    **distill_reply(body),
                    "memories": [
                        {"summary": "x", "content": "x", "importance": 0.5, "confidence": 0.5, "event_indices": [9999]}
                    ],
                }
            )
        ),
    ],
    ids=["malformed", "empty", "no-memories", "unknown-index"],
)
async def test_bad_reply_is_retried_then_succeeds(openai_server: OpenAIServer, bad) -> None:  # type: ignore[no-untyped-def]
    evs = events(20)
    openai_server.script(bad)
    result = await make_engine(openai_server).distil(evs, None)
    assert_complete(result, evs)
    assert result.usage.calls == len(openai_server.chat_requests) == 2


async def test_server_error_is_retried(openai_server: OpenAIServer) -> None:
    openai_server.script(Status(500), Status(503))
    result = await make_engine(openai_server).distil(events(10), None)
    assert result.usage.calls == 3 and len(result.memories) >= 3


async def test_rate_limit_honours_retry_after(openai_server: OpenAIServer) -> None:
    openai_server.script(rate_limited(1))
    result = await make_engine(openai_server).distil(events(10), None)
    first, second = openai_server.chat_requests
    assert second.received_at - first.received_at >= 0.95  # backoff alone would be ~0.01 s
    assert result.usage.calls == 2


async def test_rate_limit_with_an_unreadable_retry_after_backs_off_instead(openai_server: OpenAIServer) -> None:
    openai_server.script(Status(429, {"retry-after": "soon"}, "rate limited"), Status(429, {"retry-after-ms": "x"}))
    result = await make_engine(openai_server).distil(events(10), None)
    assert result.usage.calls == 3 and len(openai_server.chat_requests) == 3


async def test_slow_reply_times_out_and_is_retried(openai_server: OpenAIServer) -> None:
    openai_server.script(slow(3.0))
    started = time.monotonic()
    result = await make_engine(openai_server, timeout=0.5).distil(events(10), None)
    assert time.monotonic() - started < 2.5
    assert result.usage.calls == 2 and len(openai_server.chat_requests) == 2


async def test_persistent_failure_raises_with_usage_and_nothing_partial(openai_server: OpenAIServer) -> None:
    # the first of three batches succeeds; the second keeps failing: the whole run fails
    openai_server.script(Reply(), *[Status(500)] * 3)
    with pytest.raises(DistillError) as caught:
        await make_engine(openai_server, max_retries=2).distil(events(100), None)
    assert caught.value.usage.calls == 4 == len(openai_server.chat_requests)
    assert caught.value.usage.prompt_tokens > 0  # the successful first call's tokens are still accounted
    assert "batch 2/" in str(caught.value)


async def test_persistent_malformed_replies_raise(openai_server: OpenAIServer) -> None:
    openai_server.default = malformed()
    with pytest.raises(DistillError) as caught:
        await make_engine(openai_server, max_retries=1).distil(events(5), None)
    assert caught.value.usage.calls == 2 and caught.value.attempts == 2


async def test_client_errors_are_not_retried(openai_server: OpenAIServer) -> None:
    openai_server.script(Status(400, message="bad request"))
    with pytest.raises(DistillError):
        await make_engine(openai_server).distil(events(5), None)
    assert len(openai_server.chat_requests) == 1


async def test_uncovered_events_fall_back_to_offline_memories(openai_server: OpenAIServer) -> None:
    evs = events(12)
    openai_server.script(Reply(partial(distill_reply, skip=frozenset({1, 7}))))
    result = await make_engine(openai_server).distil(evs, None)
    assert_complete(result, evs)
    assert result.fallback_event_ids == (evs[1].id, evs[7].id)
    fallback = [m for m in result.memories if m.meta.get("fallback")]
    assert {i for m in fallback for i in m.event_ids} == {evs[1].id, evs[7].id}


async def test_identity_unchanged_when_model_returns_null(openai_server: OpenAIServer) -> None:
    openai_server.script(Reply(lambda body: {**distill_reply(body), "identity": None}))
    current = IdentityDraft(personality_type="Calm", communication_style="brief", self={"traits": ["brief"]})
    result = await make_engine(openai_server).distil(events(6), current)
    assert result.identity is None
    assert '"personality_type": "Calm"' in openai_server.chat_requests[0].body["messages"][-1]["content"]


async def test_no_events_no_calls(openai_server: OpenAIServer) -> None:
    result = await make_engine(openai_server).distil([], None)
    assert result.memories == () and result.usage.calls == 0 and openai_server.requests == []


async def test_support_server_serves_embeddings_in_both_encodings(openai_server: OpenAIServer) -> None:
    client = openai.AsyncOpenAI(base_url=openai_server.base_url, api_key="x", max_retries=0)
    default = await client.embeddings.create(model="m", input=["hello", "world"])  # base64 on the wire
    floats = await client.embeddings.create(model="m", input="hello", encoding_format="float")
    assert [len(d.embedding) for d in default.data] == [384, 384]
    assert default.data[0].embedding == pytest.approx(floats.data[0].embedding, abs=1e-6)
    assert openai_server.requests[0].body.get("encoding_format") == "base64"
