"""``elephantasm`` entry point: parses arguments and dispatches to one command module."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from collections.abc import Callable, Coroutine
from typing import Any

from elephantasm.cli import admin, anima_data, dream, importer, mcp_cmd, server
from elephantasm.cli import inject as inject_cmd
from elephantasm.cli import kv as kv_cmd
from elephantasm.cli import reembed as reembed_cmd
from elephantasm.cli.lifecycle import exit_cleanly_on_signals
from elephantasm.observability.logs import configure_logging
from elephantasm.settings import Settings

Command = Callable[[argparse.Namespace, Settings], int]


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser (also used by the tests to check the CLI surface)."""
    parser = argparse.ArgumentParser(prog="elephantasm", description="Long-term memory for AI agents.")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the API (and the dreamer, unless disabled)")
    serve.add_argument("--host", default=None)
    serve.add_argument("--port", type=int, default=None)
    serve.add_argument("--no-dreamer", action="store_true", help="do not run the dreamer in this process")
    serve.add_argument(
        "--workers", type=int, default=None, help="API processes over one database (one runs the dreamer scheduler)"
    )
    serve.set_defaults(func=server.serve)

    sub.add_parser("migrate", help="upgrade the database schema").set_defaults(func=server.migrate)
    sub.add_parser("status", help="database and row counts").set_defaults(func=server.status)

    keys = sub.add_parser("keys", help="API keys").add_subparsers(dest="keys_command", required=True)
    create = keys.add_parser("create", help="issue a key (creates the org if new)")
    create.add_argument("--org", default="local")
    create.add_argument("--name", default=None)
    create.add_argument("--expires-days", type=int, default=None)
    create.add_argument(
        "--scope",
        choices=["admin", "write", "read"],
        default="admin",
        help="admin manages keys; write also writes; read only reads (default admin)",
    )
    create.set_defaults(func=admin.keys_create)
    lst = keys.add_parser("list", help="list keys")
    lst.add_argument("--org", default=None)
    lst.set_defaults(func=admin.keys_list)
    revoke = keys.add_parser("revoke", help="revoke a key by id or prefix")
    revoke.add_argument("key")
    revoke.set_defaults(func=admin.keys_revoke)

    animas = sub.add_parser("animas", help="animas").add_subparsers(dest="animas_command", required=True)
    acreate = animas.add_parser("create")
    acreate.add_argument("name")
    acreate.add_argument("--org", default="local")
    acreate.add_argument("--description", default=None)
    acreate.set_defaults(func=admin.animas_create)
    alist = animas.add_parser("list")
    alist.add_argument("--org", default="local")
    alist.set_defaults(func=admin.animas_list)
    anima_data.add_parser(animas)

    events = sub.add_parser("events", help="events").add_subparsers(dest="events_command", required=True)
    imp = events.add_parser("import", help="import events from a JSON-lines file")
    imp.add_argument("file")
    imp.add_argument("--org", default="local")
    imp.add_argument("--anima", default=None, help="anima id for lines that carry none")
    imp.add_argument("--batch-size", type=int, default=500)
    imp.set_defaults(func=importer.events_import)

    inject_cmd.add_parser(sub)
    mcp_cmd.add_parser(sub)
    reembed_cmd.add_parser(sub)
    kv_cmd.add_parser(sub)

    dr = sub.add_parser("dream", help="distil an anima's pending events now (progress bar, then a summary)")
    dr.add_argument("anima", help="anima id, or name within --org")
    dr.add_argument("--org", default=None, help="org of an anima given by name (default: local)")
    dr.set_defaults(func=dream.dream)
    sub.add_parser("dreamer", help="run the dreamer scheduler alone").set_defaults(func=dream.dreamer)

    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the process exit code."""
    args = build_parser().parse_args(argv)
    settings = Settings()
    configure_logging(settings.log_level, settings.log_format)
    exit_cleanly_on_signals()  # SIGTERM/SIGHUP run cleanups (and stop the embedded Postgres) too
    try:
        result = args.func(args, settings)
        if asyncio.iscoroutine(result):
            result = run_coroutine(result)
    except KeyboardInterrupt:
        return 128 + signal.SIGINT
    return int(result or 0)


def run_coroutine(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run ``coro`` to completion on uvloop when it is installed, else on asyncio's own loop.

    uvloop's loop and socket transports cost the API process markedly less CPU per request than
    the pure-Python ones (benchmarks/RESULTS.md, ingest); behaviour is the same asyncio API.
    """
    try:
        import uvloop
    except ImportError:  # e.g. Windows, where uvloop does not build
        return asyncio.run(coro)
    return uvloop.run(coro)


if __name__ == "__main__":
    sys.exit(main())
