"""``elephantasm serve`` and ``migrate`` (``status`` is ``cli/status.py``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from elephantasm.cli.banner import log_banner
from elephantasm.cli.context import cli_runtime, console
from elephantasm.db.migrate import upgrade_async
from elephantasm.db.supervisor import supervised_postgres
from elephantasm.runtime import Runtime, resolve_database_url
from elephantasm.security import write_private
from elephantasm.services import keys as key_svc
from elephantasm.settings import Settings

FIRST_KEY_FILE = "first-api-key"


async def bootstrap_first_key(runtime: Runtime) -> None:
    """On an empty database, create a local org and key and show the key once: on the terminal,
    or, when stdout is not one, in ``data_dir/first-api-key`` (0600) — never in a log."""
    async with runtime.unit_of_work() as session:
        if await key_svc.count_keys(session) > 0:
            return
        issued = await key_svc.create_key(session, runtime.secret, "local", name="bootstrap")
    line = f"export ELEPHANTASM_API_KEY={issued.key}"
    if sys.stdout.isatty():
        console.print("[bold]First start: created org 'local' and an API key. It is shown only once:[/bold]")
        print(line, flush=True)
        return
    # stdout is a pipe or a file (a log): the key must never land there. It goes to a file only
    # its owner can read, and the log names the file.
    path = runtime.settings.data_dir / FIRST_KEY_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    write_private(path, (line + "\n").encode())
    print(
        f"First start: created org 'local' and an API key; stdout is not a terminal, so the key was "
        f"written to {path} (mode 0600). Read it, then delete the file.",
        flush=True,
    )


def background_tasks(settings: Settings, with_dreamer: bool) -> list[Callable[[Runtime], Any]]:
    """What runs beside the API for its lifetime (the dreamer scheduler by default)."""
    if not (with_dreamer and settings.dreamer_enabled):
        return []
    try:
        from dreamer.scheduler import scheduler_lifespan
    except ImportError:  # the dreamer package is optional at this layer
        return []
    return [scheduler_lifespan]


def listening_lines(settings: Settings) -> list[str]:
    """The banner's lines about where to reach the API, the inspector, the metrics and the MCP server."""
    base = f"http://{settings.host}:{settings.port}"
    if not settings.metrics_enabled:
        metrics = "metrics: off"
    elif settings.metrics_port:
        metrics = f"metrics: http://{settings.host}:{settings.metrics_port}/metrics"
    else:
        metrics = f"metrics: {base}/metrics"
    mcp = f"MCP: {base}/mcp (streamable HTTP)" if settings.mcp_enabled else "MCP: off"
    return [f"listening on {base} (OpenAPI at /schema)", f"inspector: {base}/ui", metrics, mcp]


def serve(args: argparse.Namespace, settings: Settings) -> Any:
    """Run the API: in this process, or with ``--workers N`` as N processes (see ``cli/workers.py``)."""
    if args.host:
        settings.host = args.host
    if args.port:
        settings.port = args.port
    workers = args.workers or settings.workers
    if workers > 1:
        from elephantasm.cli.workers import serve_workers

        return serve_workers(settings, workers, with_dreamer=not args.no_dreamer)
    return _serve_here(settings, with_dreamer=not args.no_dreamer)


async def _serve_here(settings: Settings, with_dreamer: bool) -> int:
    """Run the API with uvicorn in this event loop (one process serves everything)."""
    import uvicorn

    from api.app import create_app
    from api.heap import frozen_startup_heap
    from api.metrics import start_metrics_server

    async with cli_runtime(settings, background=False) as runtime:
        await bootstrap_first_key(runtime)
        app = create_app(runtime, background=[*background_tasks(settings, with_dreamer), frozen_startup_heap])
        start_metrics_server(settings)
        log_banner(runtime, listening_lines(settings))
        config = uvicorn.Config(
            app,
            host=settings.host,
            port=settings.port,
            log_config=None,
            access_log=False,
            proxy_headers=False,  # the app applies a trusted proxy's headers itself (api/forwarded.py)
        )
        with supervised_postgres(settings):
            await uvicorn.Server(config).serve()
    return 0


async def migrate(args: argparse.Namespace, settings: Settings) -> int:
    """Upgrade the schema to the newest revision."""
    await upgrade_async(resolve_database_url(settings))
    console.print("Database schema is up to date.")
    return 0
