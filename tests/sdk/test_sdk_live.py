"""The SDK against a real server process (``live_server``), with both clients.

Uses the shared fixtures of ``tests/conftest.py``: ``live_server`` (base URL), ``tenant`` and
``other_tenant`` (fresh orgs with ``.api_key``).
"""

from __future__ import annotations

import uuid

import httpx
import pytest
from _sdk_support import LoopbackServer, Reply, call, collect

from elephantasm_sdk import AuthenticationError, EventType, MemoryPack, NotFoundError, ValidationError
from elephantasm_sdk._core.routes import extract_event


@pytest.fixture
def sdk(make_client, live_server: str, tenant):  # type: ignore[no-untyped-def]
    """A client of the current kind for ``tenant``."""
    return make_client(live_server, api_key=tenant.api_key)


async def _new_anima(client, name: str = "sdk-live"):  # type: ignore[no-untyped-def]
    return await call(client.animas.create, name, "made by the SDK tests", {"suite": "sdk"})


def _raw_detail(live_server: str, method: str, path: str, key: str, **kwargs) -> object:  # type: ignore[no-untyped-def]
    response = httpx.request(method, live_server + path, headers={"Authorization": f"Bearer {key}"}, **kwargs)
    return response.json()["detail"]


async def test_anima_lifecycle(sdk) -> None:
    anima = await _new_anima(sdk)
    assert anima.name == "sdk-live" and anima.meta == {"suite": "sdk"}
    assert (await call(sdk.animas.get, anima.id)).id == anima.id
    renamed = await call(sdk.animas.update, anima.id, name="renamed")
    assert renamed.name == "renamed" and renamed.description == "made by the SDK tests"
    assert anima.id in [a.id for a in await collect(sdk.animas.list(limit=2))]
    await call(sdk.animas.delete, anima.id)
    with pytest.raises(NotFoundError):
        await call(sdk.animas.get, anima.id)


async def test_extract_single_and_batch(sdk) -> None:
    anima = await _new_anima(sdk)
    one = await call(sdk.extract, EventType.MESSAGE_IN, "hello there", anima_id=anima.id, session_id="s1",
                     role="user", meta={"n": 1}, importance_score=0.7)  # fmt: skip
    assert (one.anima_id, one.content, one.role, one.session_id) == (anima.id, "hello there", "user", "s1")
    assert one.meta == {"n": 1} and one.importance_score == 0.7 and len(one.dedupe_key) == 32
    batch = await call(sdk.events.batch, [
        {"event_type": "message.out", "content": "hi!", "role": "assistant", "session_id": "s1"},
        {"event_type": EventType.TOOL_CALL, "content": "search(tea)", "session_id": "s1"},
        {"event_type": "TOOL_RESULT", "content": "tea is a drink", "session_id": "s1"},
    ], anima_id=anima.id)  # fmt: skip
    assert [e.content for e in batch] == ["hi!", "search(tea)", "tea is a drink"]
    assert [e.event_type for e in batch] == ["message.out", "tool.call", "tool.result"]
    assert (await call(sdk.events.get, batch[1].id)).content == "search(tea)"


async def test_retried_extract_creates_one_event(sdk, live_server: str, make_client, tenant) -> None:
    """The first response is lost on the way back (the proxy answers 503); the retry must not duplicate."""
    anima = await _new_anima(sdk)
    stored: list[str] = []

    def lose_first_response(req) -> Reply:  # type: ignore[no-untyped-def]
        upstream = httpx.request(req.method, live_server + req.path, params=req.query, json=req.body,
                                 headers={"Authorization": req.headers["authorization"]})  # fmt: skip
        if req.method == "POST" and req.path == "/api/events" and not stored:
            stored.append(upstream.json()["id"])
            return Reply(503, {"detail": "response lost"})
        return Reply(upstream.status_code, upstream.json() if upstream.content else None)

    proxy = LoopbackServer(lose_first_response).start()
    try:
        client = make_client(proxy.url, api_key=tenant.api_key, anima_id=str(anima.id))
        event = await call(client.extract, "message.in", "exactly once")
    finally:
        proxy.stop()
    posts = [r for r in proxy.requests if r.method == "POST"]
    assert len(posts) == 2 and posts[0].body["dedupe_key"] == posts[1].body["dedupe_key"]
    assert str(event.id) == stored[0]
    events = await collect(sdk.events.list(anima.id))
    assert [e.id for e in events] == [event.id]


async def test_list_walks_every_page(sdk) -> None:
    anima = await _new_anima(sdk)
    sent = await call(sdk.events.batch, [{"event_type": "message.in", "content": f"m{i}"} for i in range(23)],
                      anima_id=anima.id)  # fmt: skip
    pager = sdk.events.list(anima.id, limit=5)
    got = await collect(pager)
    assert sorted(str(e.id) for e in got) == sorted(str(e.id) for e in sent)
    assert len({e.id for e in got}) == 23
    pages = [p async for p in pager.iter_pages()] if hasattr(pager, "__aiter__") else list(pager.iter_pages())
    assert [len(p.items) for p in pages][:4] == [5, 5, 5, 5] and sum(len(p.items) for p in pages) == 23


async def test_inject_new_anima_is_none(sdk) -> None:
    anima = await _new_anima(sdk)
    assert await call(sdk.inject, anima.id) is None


async def test_inject_after_events_returns_pack(sdk) -> None:
    anima = await _new_anima(sdk)
    await call(
        sdk.extract, "message.in", "My favourite drink is green tea.", anima_id=anima.id, session_id="s", role="user"
    )
    await call(sdk.extract, "message.out", "Noted: green tea.", anima_id=anima.id, session_id="s", role="assistant")
    pack = await call(sdk.inject, anima.id, max_tokens=800)
    assert isinstance(pack, MemoryPack) and pack.anima_id == anima.id
    assert pack.as_prompt().strip() and pack.as_prompt() == pack.content.context
    assert 0 < pack.token_count <= 800 and pack.fingerprint


async def test_conditional_inject_reuses_pack_on_304(make_client, live_server: str, tenant, kind: str) -> None:
    statuses: list[int] = []
    if kind == "sync":
        http = httpx.Client(event_hooks={"response": [lambda r: statuses.append(r.status_code)]})
    else:

        async def hook(response: httpx.Response) -> None:
            statuses.append(response.status_code)

        http = httpx.AsyncClient(event_hooks={"response": [hook]})
    client = make_client(live_server, api_key=tenant.api_key, http_client=http)
    anima = await _new_anima(client)
    await call(client.extract, "message.in", "remember me", anima_id=anima.id)
    for _ in range(2):  # a second round only if the first straddled an as_of bucket boundary
        statuses.clear()
        first = await call(client.inject, anima.id)
        second = await call(client.inject, anima.id)
        if statuses[-1] == 304:
            break
    assert statuses[-2:] == [200, 304] and second is first
    await call(http.close if kind == "sync" else http.aclose)


async def test_errors_carry_the_server_detail(sdk, make_client, live_server: str, tenant) -> None:
    bad = make_client(live_server, api_key="sk_live_" + "x" * 40)
    with pytest.raises(AuthenticationError) as auth:
        await call(bad.animas.create, "nope")
    assert auth.value.status_code == 401
    assert auth.value.detail == _raw_detail(
        live_server, "POST", "/api/animas", "sk_live_" + "x" * 40, json={"name": "nope"}
    )

    missing = str(uuid.uuid4())
    with pytest.raises(NotFoundError) as nf:
        await call(sdk.animas.get, missing)
    assert nf.value.detail == _raw_detail(live_server, "GET", f"/api/animas/{missing}", tenant.api_key)

    anima = await _new_anima(sdk)
    with pytest.raises(ValidationError) as invalid:  # blank content passes the SDK, not the server
        await call(sdk.extract, "message.in", "   ", anima_id=anima.id, dedupe_key="k-422")
    body = extract_event(str(anima.id), "message.in", "   ", dedupe_key="k-422").request.json
    assert invalid.value.status_code == 422
    assert invalid.value.detail == _raw_detail(live_server, "POST", "/api/events", tenant.api_key, json=body)


async def test_other_tenant_sees_nothing(sdk, make_client, live_server: str, other_tenant) -> None:
    anima = await _new_anima(sdk)
    event = await call(sdk.extract, "message.in", "private", anima_id=anima.id)
    intruder = make_client(live_server, api_key=other_tenant.api_key)
    with pytest.raises(NotFoundError):
        await call(intruder.animas.get, anima.id)
    with pytest.raises(NotFoundError):
        await call(intruder.events.get, event.id)
    with pytest.raises(NotFoundError):
        await call(intruder.extract, "message.in", "sneaky", anima_id=anima.id)
    assert anima.id not in [a.id for a in await collect(intruder.animas.list())]


async def test_scoped_keys(sdk, make_client, live_server: str) -> None:  # type: ignore[no-untyped-def]
    """An admin key mints a read key; the read key reads but a write is a PermissionDeniedError (403)."""
    from elephantasm_sdk import PermissionDeniedError

    anima = await _new_anima(sdk)
    read_key = await call(sdk.keys.create, "reader", scope="read")
    assert read_key.scope == "read" and read_key.key
    reader = make_client(live_server, api_key=read_key.key)
    assert (await call(reader.animas.get, anima.id)).id == anima.id
    with pytest.raises(PermissionDeniedError) as denied:
        await call(reader.animas.create, "nope")
    assert denied.value.status_code == 403 and "write" in str(denied.value.detail)
    with pytest.raises(PermissionDeniedError):
        await call(reader.keys.list)
