"""Resources over loopback HTTP: pagination, conditional inject, batch, dreams.wait, the rest."""

from __future__ import annotations

import uuid

import pytest
from _sdk_support import LoopbackServer, Reply, anima_json, call, collect, event_json, pack_json

from elephantasm_sdk import DreamTimeoutError, MemoryPack, NotFoundError

A = "00000000-0000-4000-8000-0000000000a1"
P = "00000000-0000-4000-8000-0000000000c3"
ALL_IDS = [str(uuid.UUID(int=i + 1)) for i in range(17)]


def _paged_events(req) -> Reply:
    """Pages of ``limit`` events; the cursor is the index of the next item."""
    start = int(req.query.get("cursor") or 0)
    limit = int(req.query["limit"])
    items = [event_json(i, A, f"e{n}") for n, i in enumerate(ALL_IDS[start : start + limit], start)]
    nxt = start + limit
    return Reply(200, {"items": items, "next_cursor": str(nxt) if nxt < len(ALL_IDS) else None})


async def test_pagination_walks_every_page(loopback: LoopbackServer, make_client) -> None:
    loopback.handler = _paged_events
    client = make_client(loopback.url, anima_id=A)
    events = await collect(client.events.list(limit=7, session_id="s1"))
    assert [str(e.id) for e in events] == ALL_IDS
    assert [r.query.get("cursor") for r in loopback.requests] == [None, "7", "14"]
    assert all(r.query["limit"] == "7" and r.query["anima_id"] == A and r.query["session_id"] == "s1"
               for r in loopback.requests)  # fmt: skip


async def test_first_page_and_bare_list(loopback: LoopbackServer, make_client) -> None:
    loopback.handler = _paged_events
    client = make_client(loopback.url)
    page = await call(client.events.list(A, limit=5).first_page)
    assert len(page.items) == 5 and page.next_cursor == "5" and len(loopback.requests) == 1
    loopback.handler = lambda req: Reply(200, [anima_json(A)])
    assert [str(a.id) for a in await collect(client.animas.list())] == [A]


async def test_inject_none_then_pack_then_304_reuse(loopback: LoopbackServer, make_client) -> None:
    loopback.script(Reply(200, None))
    client = make_client(loopback.url, anima_id=A)
    assert await call(client.inject) is None
    etag = '"' + "f" * 64 + '"'
    loopback.script(Reply(200, pack_json(P, A, "CTX"), headers={"ETag": etag}), Reply(304, headers={"ETag": etag}))
    first = await call(client.inject, query="tea", max_tokens=500)
    second = await call(client.packs.inject, A, "tea", max_tokens=500)
    assert isinstance(first, MemoryPack) and second is first and second.as_prompt() == "CTX"
    sent = loopback.requests[-2:]
    assert "if-none-match" not in sent[0].headers and sent[1].headers["if-none-match"] == etag
    assert sent[1].query == {"query": "tea", "max_tokens": "500"}
    assert sent[1].path == f"/api/animas/{A}/memory-packs/latest"


async def test_inject_conditional_is_per_arguments_and_optional(loopback: LoopbackServer, make_client) -> None:
    loopback.handler = lambda req: Reply(200, pack_json(P, A), headers={"ETag": '"e"'})
    client = make_client(loopback.url, anima_id=A)
    await call(client.inject, query="one")
    await call(client.inject, query="two")  # other arguments: no ETag to offer
    await call(client.inject, query="one", conditional=False)
    await call(client.inject, query="one")
    assert [r.headers.get("if-none-match") for r in loopback.requests] == [None, None, None, '"e"']


async def test_batch_returns_events_in_request_order(loopback: LoopbackServer, make_client) -> None:
    def batch(req) -> Reply:
        return Reply(201, {"items": [event_json(str(uuid.uuid4()), e["anima_id"], e["content"],
                                                dedupe_key=e["dedupe_key"]) for e in req.body["events"]]})  # fmt: skip

    loopback.handler = batch
    client = make_client(loopback.url, anima_id=A)
    items = [{"event_type": "message.in", "content": f"m{i}"} for i in range(5)]
    events = await call(client.events.batch, items)
    assert [e.content for e in events] == [f"m{i}" for i in range(5)]
    assert loopback.requests[0].path == "/api/events/batch"


async def test_dreams_wait_polls_until_final(loopback: LoopbackServer, make_client) -> None:
    run = {"id": P, "anima_id": A}
    loopback.script(Reply(200, {**run, "status": "running"}), Reply(200, {**run, "status": "running"}))
    loopback.handler = lambda req: Reply(200, {**run, "status": "completed", "memories_created": 2})
    client = make_client(loopback.url)
    done = await call(client.dreams.wait, P, timeout=5, poll_interval=0.01)
    assert done.status == "completed" and done.memories_created == 2 and len(loopback.requests) == 3
    assert loopback.requests[0].path == f"/api/dreams/sessions/{P}"


async def test_dreams_wait_times_out(loopback: LoopbackServer, make_client) -> None:
    loopback.handler = lambda req: Reply(200, {"id": P, "anima_id": A, "status": "running"})
    client = make_client(loopback.url)
    with pytest.raises(DreamTimeoutError):
        await call(client.dreams.wait, P, timeout=0.1, poll_interval=0.02)


async def test_curation_endpoints(loopback: LoopbackServer, make_client) -> None:
    mem = {"id": P, "anima_id": A, "summary": "s", "state": "active"}
    know = {"id": P, "anima_id": A, "type": "FACT", "content": "c"}
    routes = {
        ("GET", f"/api/memories/{P}"): Reply(200, mem),
        ("PATCH", f"/api/memories/{P}"): Reply(200, {**mem, "state": "archived"}),
        ("DELETE", f"/api/memories/{P}"): Reply(204),
        ("GET", f"/api/memories/{P}/events"): Reply(200, {"items": [event_json(P, A)]}),
        ("POST", "/api/memories/search/semantic"): Reply(200, [{**mem, "similarity": 0.9}]),
        ("GET", "/api/knowledge"): Reply(200, {"items": [know], "next_cursor": None}),
        ("GET", f"/api/knowledge/{P}/history"): Reply(200, [know, know]),
        ("GET", f"/api/identities/anima/{A}"): Reply(200, {"anima_id": A, "version": 2, "prose": "me"}),
        ("POST", f"/api/identities/anima/{A}/restore"): Reply(200, {"anima_id": A, "version": 3}),
    }
    loopback.handler = lambda req: routes.get((req.method, req.path), Reply(404, {"detail": "nope"}))
    client = make_client(loopback.url, anima_id=A)
    assert (await call(client.memories.get, P)).summary == "s"
    assert (await call(client.memories.update, P, state="archived")).state == "archived"
    assert loopback.requests[-1].body == {"state": "archived"}
    assert await call(client.memories.delete, P) is None
    assert len(await call(client.memories.events, P)) == 1
    assert (await call(client.memories.search, "tea", limit=3))[0].similarity == 0.9
    assert [k.type for k in await collect(client.knowledge.list(type="FACT"))] == ["FACT"]
    assert len(await call(client.knowledge.history, P)) == 2
    assert (await call(client.identity.get)).prose == "me"
    assert (await call(client.identity.restore, 2)).version == 3
    with pytest.raises(NotFoundError, match="nope"):
        await call(client.knowledge.get, P)


async def test_client_context_managers(loopback: LoopbackServer, kind: str) -> None:
    from elephantasm_sdk import AsyncElephantasm, Elephantasm

    loopback.handler = lambda req: Reply(200, anima_json(A))
    if kind == "sync":
        with Elephantasm(api_key="k", endpoint=loopback.url) as client:
            client.animas.get(A)
        assert client._http.is_closed
    else:
        async with AsyncElephantasm(api_key="k", endpoint=loopback.url) as aclient:
            await aclient.animas.get(A)
        assert aclient._http.is_closed


def test_module_functions_use_the_environment(loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> None:
    import elephantasm_sdk
    from elephantasm_sdk import functions

    routes = {"/api/animas": Reply(201, anima_json(A)), "/api/events": Reply(201, event_json(P, A)),
              f"/api/animas/{A}/memory-packs/latest": Reply(200, None)}  # fmt: skip
    loopback.handler = lambda req: routes[req.path]
    monkeypatch.setenv("ELEPHANTASM_API_KEY", "sk_env")
    monkeypatch.setenv("ELEPHANTASM_ENDPOINT", loopback.url)
    monkeypatch.setenv("ELEPHANTASM_ANIMA_ID", A)
    monkeypatch.setattr(functions, "_default_client", None)
    assert str(elephantasm_sdk.create_anima("bot", "desc").id) == A
    assert elephantasm_sdk.extract("MESSAGE_IN", "hi", role="user").content == "hi"
    assert elephantasm_sdk.inject(query="q", max_tokens=300) is None
    assert [r.headers["authorization"] for r in loopback.requests] == ["Bearer sk_env"] * 3
    assert loopback.requests[1].body["anima_id"] == A and loopback.requests[2].query == {
        "query": "q",
        "max_tokens": "300",
    }
    functions._default_client.close()
