"""The MCP server, driven by the official SDK's own client: over streamable HTTP against ``/mcp`` on
a live server, and over stdio by spawning ``elephantasm mcp`` against that server."""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections.abc import Callable
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from elephantasm.runtime import Runtime
from elephantasm.services.dreams import run_dream
from tests.conftest import Tenant
from tests.support.servers import REPO_ROOT

TOOLS = {"remember", "recall", "search_memories", "forget_memory", "list_animas"}


def over_http(base_url: str, key: str | None) -> Client:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return Client(streamable_http_client(f"{base_url}/mcp", http_client=httpx2.AsyncClient(headers=headers)))


def over_stdio(base_url: str, key: str) -> Client:
    env = {**os.environ, "ELEPHANTASM_ENDPOINT": base_url, "ELEPHANTASM_API_KEY": key}
    return Client(
        StdioServerParameters(
            command=sys.executable, args=["-m", "elephantasm.cli.main", "mcp"], env=env, cwd=str(REPO_ROOT)
        )
    )


def result(call: Any) -> Any:
    assert not call.is_error, call.content
    return call.structured_content["result"]


async def new_anima(base_url: str, tenant: Tenant, name: str) -> str:
    async with httpx.AsyncClient(base_url=base_url, headers=tenant.headers) as http:
        r = await http.post("/api/animas", json={"name": name})
    assert r.status_code == 201, r.text
    return r.json()["id"]


async def latest_context(base_url: str, tenant: Tenant, anima_id: str, query: str, max_tokens: int) -> str:
    async with httpx.AsyncClient(base_url=base_url, headers=tenant.headers) as http:
        r = await http.get(
            f"/api/animas/{anima_id}/memory-packs/latest", params={"query": query, "max_tokens": max_tokens}
        )
    assert r.status_code == 200, r.text
    return r.json()["context"]


async def exercise(client: Client, runtime: Runtime, base_url: str, tenant: Tenant, anima_id: str) -> None:
    """Every tool and the resource, checked against what the HTTP API says."""
    assert {t.name for t in (await client.list_tools()).tools} == TOOLS
    assert anima_id in {a["id"] for a in result(await client.call_tool("list_animas", {}))}

    events = [
        {"content": "I keep three hives of bees on the roof", "role": "user", "session_id": "mcp-1"},
        {
            "content": "Three hives on the roof, noted.",
            "event_type": "message.out",
            "role": "assistant",
            "session_id": "mcp-1",
        },
    ]
    stored = result(await client.call_tool("remember", {"anima_id": anima_id, "events": events}))
    assert [e["event_type"] for e in stored] == ["message.in", "message.out"]
    one = result(await client.call_tool("remember", {"anima_id": anima_id, "events": [{"content": "I like rye"}]}))
    assert len(one) == 1 and one[0]["anima_id"] == anima_id

    recalled = await client.call_tool("recall", {"anima_id": anima_id, "query": "bees", "max_tokens": 600})
    assert result(recalled) == await latest_context(base_url, tenant, anima_id, "bees", 600)
    assert "three hives of bees" in result(recalled)

    await run_dream(runtime.dreams, tenant.org_id, uuid.UUID(anima_id))
    found = result(await client.call_tool("search_memories", {"query": "bees hives roof", "anima_id": anima_id}))
    assert found and any("hives" in (m["summary"] or "") + (m["content"] or "") for m in found)
    gone = found[0]["id"]
    forgot = await client.call_tool("forget_memory", {"memory_id": gone})
    assert not forgot.is_error and forgot.structured_content == {"deleted": gone}
    again = result(await client.call_tool("search_memories", {"query": "bees hives roof", "anima_id": anima_id}))
    assert gone not in {m["id"] for m in again}

    resource = await client.read_resource(f"elephantasm://animas/{anima_id}/pack")
    pack = json.loads(resource.contents[0].text)
    assert pack["anima_id"] == anima_id and pack["context"] and pack["fingerprint"]


async def assert_isolated(client: Client, other_anima: str) -> None:
    """Another org's anima is invisible and its ids are 404, exactly as over the API."""
    assert other_anima not in {a["id"] for a in result(await client.call_tool("list_animas", {}))}
    for name, args in [
        ("recall", {"anima_id": other_anima}),
        ("remember", {"anima_id": other_anima, "events": [{"content": "intrusion"}]}),
        ("search_memories", {"anima_id": other_anima, "query": "anything"}),
    ]:
        call = await client.call_tool(name, args)
        assert call.is_error and "404" in call.content[0].text, (name, call.content)


@pytest.mark.parametrize("connect", [over_http, over_stdio], ids=["http", "stdio"])
async def test_mcp_tools_and_resource(
    connect: Callable[[str, str], Client], live_server: str, runtime: Runtime, tenant: Tenant, other_tenant: Tenant
) -> None:
    """Over streamable HTTP (``/mcp`` on the live server) and over stdio (``elephantasm mcp`` spawned)."""
    anima_id = await new_anima(live_server, tenant, "mcp")
    other = await new_anima(live_server, other_tenant, "not-yours")
    async with connect(live_server, tenant.api_key) as client:
        await exercise(client, runtime, live_server, tenant, anima_id)
        await assert_isolated(client, other)


async def test_mcp_over_http_needs_a_valid_key(live_server: str) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    async with httpx.AsyncClient(base_url=live_server) as http:
        for headers in ({}, {"Authorization": "Bearer sk_live_not-a-real-key"}):
            r = await http.post("/mcp", json=body, headers=headers)
            assert r.status_code == 401 and r.json()["detail"], r.text


@pytest.mark.parametrize("env", [{"ELEPHANTASM_API_KEY": ""}])
def test_mcp_stdio_without_a_key_says_so(env: dict[str, str]) -> None:
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-m", "elephantasm.cli.main", "mcp"],
        env={**os.environ, **env},
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2 and "ELEPHANTASM_API_KEY" in proc.stderr and proc.stdout == ""
