"""Retries, timeouts and error mapping over real HTTP on loopback, for the sync and async clients."""

from __future__ import annotations

import time
import uuid

import pytest
from _sdk_support import LoopbackServer, Reply, anima_json, call, event_json

from elephantasm_sdk import (
    APIConnectionError,
    APITimeoutError,
    AuthenticationError,
    ConflictError,
    ElephantasmError,
    NotFoundError,
    PayloadTooLargeError,
    RateLimitError,
    RetryPolicy,
    ServerError,
    ValidationError,
)

A = "00000000-0000-4000-8000-0000000000a1"


def _event_reply(req) -> Reply:
    body = req.body or {}
    return Reply(201, event_json(str(uuid.uuid4()), body.get("anima_id", A), body.get("content", ""),
                                 dedupe_key=body.get("dedupe_key")))  # fmt: skip


@pytest.mark.parametrize("failures", [1, 3])
async def test_fails_n_times_then_succeeds(loopback: LoopbackServer, make_client, failures: int) -> None:
    loopback.script(*[Reply(503, {"detail": "warming up"}) for _ in range(failures)])
    loopback.handler = lambda req: Reply(200, anima_json(A))
    client = make_client(loopback.url)
    anima = await call(client.animas.get, A)
    assert str(anima.id) == A
    assert len(loopback.requests) == failures + 1
    assert all(r.headers["authorization"] == "Bearer sk_test_key" for r in loopback.requests)


async def test_retries_are_bounded(loopback: LoopbackServer, make_client) -> None:
    loopback.handler = lambda req: Reply(500, {"detail": "database on fire"})
    client = make_client(loopback.url, retry=RetryPolicy(max_retries=2, initial_delay=0.01))
    with pytest.raises(ServerError) as info:
        await call(client.animas.get, A)
    assert info.value.status_code == 500 and info.value.detail == "database on fire"
    assert len(loopback.requests) == 3


async def test_with_options_overrides_retries_and_shares_connections(loopback: LoopbackServer, make_client) -> None:
    loopback.handler = lambda req: Reply(502, {"detail": "bad gateway"})
    client = make_client(loopback.url)
    quick = client.with_options(max_retries=0, timeout=5)
    assert quick.max_retries == 0 and quick.timeout == 5 and client.max_retries == 3
    assert quick._http is client._http
    with pytest.raises(ServerError):
        await call(quick.animas.get, A)
    assert len(loopback.requests) == 1


async def test_retry_after_is_honoured(loopback: LoopbackServer, make_client) -> None:
    loopback.script(Reply(429, {"detail": "slow down"}, headers={"Retry-After": "1"}))
    loopback.handler = lambda req: Reply(200, anima_json(A))
    client = make_client(loopback.url)
    await call(client.animas.get, A)
    first, second = loopback.requests
    assert second.at - first.at >= 0.95  # the fast backoff alone would retry after ~10 ms


async def test_retry_after_beyond_cap_raises_rate_limit(loopback: LoopbackServer, make_client) -> None:
    loopback.handler = lambda req: Reply(429, {"detail": "quota exhausted"}, headers={"Retry-After": "3600"})
    client = make_client(loopback.url)
    with pytest.raises(RateLimitError) as info:
        await call(client.animas.get, A)
    assert info.value.detail == "quota exhausted" and info.value.retry_after == 3600
    assert len(loopback.requests) == 1


async def test_dropped_connections_are_retried(loopback: LoopbackServer, make_client) -> None:
    loopback.script(Reply(drop=True), Reply(drop=True))
    loopback.handler = lambda req: Reply(200, anima_json(A))
    client = make_client(loopback.url)
    assert str((await call(client.animas.get, A)).id) == A
    assert len(loopback.requests) == 3


async def test_unreachable_server_raises_connection_error(make_client) -> None:
    client = make_client("http://127.0.0.1:9", retry=RetryPolicy(max_retries=1, initial_delay=0.01))
    with pytest.raises(APIConnectionError):
        await call(client.animas.get, A)


async def test_per_call_timeout(loopback: LoopbackServer, make_client) -> None:
    # The reply takes 1.5 s: a call cut off at 0.1 s returns well before it, even on a loaded machine.
    loopback.handler = lambda req: Reply(200, anima_json(A), delay=1.5)
    client = make_client(loopback.url, retry=RetryPolicy(max_retries=0))
    start = time.monotonic()
    with pytest.raises(APITimeoutError):
        await call(client.animas.get, A, timeout=0.1)
    assert time.monotonic() - start < 1.0
    assert str((await call(client.animas.get, A)).id) == A  # default timeout is long enough


async def test_retried_extract_reuses_its_dedupe_key(loopback: LoopbackServer, make_client) -> None:
    loopback.script(Reply(503, {"detail": "x"}), Reply(drop=True), Reply(500, {"detail": "y"}))
    loopback.handler = _event_reply
    client = make_client(loopback.url, anima_id=A)
    event = await call(client.extract, "message.in", "hello", role="user")
    keys = [r.body["dedupe_key"] for r in loopback.requests]
    assert len(keys) == 4 and len(set(keys)) == 1 and len(keys[0]) == 32
    assert event.dedupe_key == keys[0]
    await call(client.events.extract, "message.out", "again", dedupe_key="caller-key")
    assert loopback.requests[-1].body["dedupe_key"] == "caller-key"


ERROR_CASES = [
    (401, "Invalid API key", AuthenticationError),
    (404, "Anima not found", NotFoundError),
    (409, "A dream is already running", ConflictError),
    (413, "Event too large", PayloadTooLargeError),
    (422, [{"loc": ["body", "name"], "msg": "field required"}], ValidationError),
    (400, "Bad request", ElephantasmError),
]


@pytest.mark.parametrize(("status", "detail", "cls"), ERROR_CASES)
async def test_client_errors_map_and_are_not_retried(
    loopback: LoopbackServer, make_client, status: int, detail: object, cls: type
) -> None:
    loopback.handler = lambda req: Reply(status, {"detail": detail})
    client = make_client(loopback.url)
    with pytest.raises(cls) as info:
        await call(client.animas.get, A)
    assert type(info.value) is cls
    assert info.value.status_code == status and info.value.detail == detail
    assert len(loopback.requests) == 1


async def test_trigger_conflict(loopback: LoopbackServer, make_client) -> None:
    run = {"id": str(uuid.uuid4()), "anima_id": A, "status": "running"}
    loopback.script(Reply(202, run), Reply(409, {"detail": "already running"}))
    client = make_client(loopback.url, anima_id=A)
    assert (await call(client.dreams.trigger)).status == "running"
    assert loopback.requests[0].body == {"anima_id": A}
    with pytest.raises(ConflictError, match="already running"):
        await call(client.dreams.trigger)


def test_missing_api_key_is_a_value_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from elephantasm_sdk import AsyncElephantasm, Elephantasm

    monkeypatch.delenv("ELEPHANTASM_API_KEY", raising=False)
    for cls in (Elephantasm, AsyncElephantasm):
        with pytest.raises(ValueError, match="API key required"):
            cls()
