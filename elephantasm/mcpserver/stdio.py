"""``elephantasm mcp``: the MCP server over stdio for desktop agent hosts, a bridge to a running
server through the SDK (configured like the SDK). Stdout carries the protocol; logs go to stderr.
"""

from __future__ import annotations

from mcp.server.mcpserver import Context

from elephantasm.mcpserver.tools import build_server
from elephantasm_sdk import AsyncElephantasm


async def serve_stdio(client: AsyncElephantasm) -> None:
    """Serve MCP on this process's stdin/stdout until the host closes it."""

    async def source(_: Context) -> AsyncElephantasm:
        return client

    async with client:
        await build_server(source).run_stdio_async()
