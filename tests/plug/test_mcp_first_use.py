"""MCP as a new user meets it (issues 28 and 29): a read key can use the read tools, reading the pack
of an anima that is not yours is a not-found (and logs no traceback), ``GET /mcp/`` does not hang,
and ``/metrics`` counts MCP requests under their own route."""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from elephantasm.domain.keys import KeyScope
from elephantasm.runtime import Runtime
from elephantasm.services.keys import create_key
from tests.conftest import Tenant
from tests.plug.test_mcp import new_anima, over_http, result
from tests.support.servers import REPO_ROOT


@asynccontextmanager
async def over_stdio_logged(base_url: str, key: str, errlog: Path) -> AsyncIterator[Client]:
    """``elephantasm mcp`` spawned against ``base_url``, its stderr (the log) kept in ``errlog``."""
    env = {**os.environ, "ELEPHANTASM_ENDPOINT": base_url, "ELEPHANTASM_API_KEY": key}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "elephantasm.cli.main", "mcp"], env=env, cwd=str(REPO_ROOT)
    )
    with errlog.open("w") as err:
        async with Client(stdio_client(params, errlog=err)) as client:
            yield client


async def _assert_pack_not_found(client: Client, anima_ids: list[str]) -> None:
    for anima_id in anima_ids:
        with pytest.raises(MCPError) as caught:
            await client.read_resource(f"elephantasm://animas/{anima_id}/pack")
        assert caught.value.code == INVALID_PARAMS, caught.value.error
        assert "404" in caught.value.error.message and "not found" in caught.value.error.message
        assert "Error creating resource" not in caught.value.error.message


async def test_pack_of_an_unknown_or_foreign_anima_is_not_found_over_http(
    live_server: str, data_dir: Path, tenant: Tenant, other_tenant: Tenant
) -> None:
    theirs = await new_anima(live_server, other_tenant, "theirs")
    log = data_dir / "live-server.log"
    logged_before = log.stat().st_size
    async with over_http(live_server, tenant.api_key) as client:
        await _assert_pack_not_found(client, [str(uuid.uuid4()), theirs])
    with log.open() as f:
        f.seek(logged_before)
        assert "Traceback" not in f.read()


async def test_pack_of_an_unknown_or_foreign_anima_is_not_found_over_stdio(
    live_server: str, tmp_path: Path, tenant: Tenant, other_tenant: Tenant
) -> None:
    theirs = await new_anima(live_server, other_tenant, "theirs")
    errlog = tmp_path / "mcp-stderr.log"
    async with over_stdio_logged(live_server, tenant.api_key, errlog) as client:
        await _assert_pack_not_found(client, [str(uuid.uuid4()), theirs])
    assert "Traceback" not in errlog.read_text()


async def test_a_read_key_uses_the_read_tools_and_is_refused_the_writes(
    live_server: str, runtime: Runtime, tenant: Tenant
) -> None:
    """Scope per tool: each tool's API call checks the key, exactly as the HTTP API does."""
    anima_id = await new_anima(live_server, tenant, "readable")
    async with runtime.unit_of_work() as session:
        read_key = (await create_key(session, runtime.secret, tenant.org_name, scope=KeyScope.READ)).key
    async with over_http(live_server, read_key) as client:
        assert anima_id in {a["id"] for a in result(await client.call_tool("list_animas", {}))}
        assert isinstance(result(await client.call_tool("recall", {"anima_id": anima_id, "query": "x"})), str)
        assert result(await client.call_tool("search_memories", {"anima_id": anima_id, "query": "x"})) == []
        for name, args in [
            ("remember", {"anima_id": anima_id, "events": [{"content": "not with a read key"}]}),
            ("forget_memory", {"memory_id": str(uuid.uuid4())}),
        ]:
            call = await client.call_tool(name, args)
            assert call.is_error and "403" in call.content[0].text, (name, call.content)
    async with httpx.AsyncClient(base_url=live_server, headers=tenant.headers) as http:
        r = await http.get("/api/events", params={"anima_id": anima_id})
    assert r.json()["items"] == []


async def test_get_on_the_stateless_mcp_endpoint_is_405_not_an_endless_stream(live_server: str, tenant: Tenant) -> None:
    async with httpx.AsyncClient(base_url=live_server, headers=tenant.headers, timeout=15) as http:
        for path in ("/mcp", "/mcp/"):
            # a stream that never closes may still send bytes: bound the whole response, not each read
            async with asyncio.timeout(30):
                r = await http.get(path, headers={"Accept": "text/event-stream"})
            assert r.status_code == 405, (path, r.status_code)
            assert r.headers["allow"] == "POST" and "POST" in r.json()["detail"]


async def test_mcp_requests_are_counted_under_their_route(live_server: str, tenant: Tenant) -> None:
    async with over_http(live_server, tenant.api_key) as client:
        await client.list_tools()
    async with httpx.AsyncClient(base_url=live_server) as http:
        metrics = (await http.get("/metrics")).text
    counted = [
        line for line in metrics.splitlines() if line.startswith("elephantasm_http_requests_total") and "POST" in line
    ]
    assert any('route="/mcp"' in line for line in counted), counted
    assert not any('route="unmatched"' in line and 'status="200"' in line for line in counted), counted
