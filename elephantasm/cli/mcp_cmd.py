"""``elephantasm mcp``: the stdio MCP bridge (see ``elephantasm/mcpserver/stdio.py``)."""

from __future__ import annotations

import argparse
import sys

from elephantasm.settings import Settings


async def run(args: argparse.Namespace, settings: Settings) -> int:
    """Serve MCP over stdio against the server the SDK's environment names; 2 without a key."""
    try:
        from elephantasm.mcpserver.stdio import serve_stdio
        from elephantasm_sdk import AsyncElephantasm
    except ImportError as exc:  # the SDK is its own distribution (./sdk)
        print(f"elephantasm mcp needs the SDK: pip install ./sdk ({exc})", file=sys.stderr)
        return 2
    try:
        client = AsyncElephantasm()  # ELEPHANTASM_ENDPOINT / _API_KEY / _TIMEOUT, like any SDK user
    except ValueError as exc:  # the SDK says which variable is missing or malformed
        print(f"elephantasm mcp: {exc}", file=sys.stderr)
        return 2
    await serve_stdio(client)
    return 0
