"""``elephantasm mcp``: the stdio MCP bridge (see ``elephantasm/mcpserver/stdio.py``)."""

from __future__ import annotations

import argparse
import os
import signal
import sys

from elephantasm.settings import Settings


def run(args: argparse.Namespace, settings: Settings) -> int:
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
    from elephantasm.cli.lifecycle import exit_on_interrupt_too
    from elephantasm.cli.main import run_coroutine

    exit_on_interrupt_too()
    try:
        run_coroutine(serve_stdio(client))
    except (SystemExit, KeyboardInterrupt) as exc:
        # The stdio transport reads stdin on a worker thread that no signal interrupts, and the
        # interpreter joins that thread at exit: while the host keeps stdin open, the process would
        # never end. The bridge holds nothing to clean up (no database, no files), so it leaves now.
        code = exc.code if isinstance(exc, SystemExit) and isinstance(exc.code, int) else 128 + signal.SIGINT
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return 0
