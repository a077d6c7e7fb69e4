"""``elephantasm serve`` and ``migrate`` (``status`` is ``cli/status.py``)."""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from elephantasm.cli.banner import bootstrap_first_key, listening_lines, log_banner
from elephantasm.cli.context import cli_runtime, console
from elephantasm.db.migrate import upgrade_async
from elephantasm.db.supervisor import supervised_postgres
from elephantasm.runtime import Runtime, resolve_database_url
from elephantasm.settings import Settings


def background_tasks(settings: Settings, with_dreamer: bool) -> list[Callable[[Runtime], Any]]:
    """What runs beside the API for its lifetime (the dreamer scheduler by default)."""
    if not (with_dreamer and settings.dreamer_enabled):
        return []
    try:
        from dreamer.scheduler import scheduler_lifespan
    except ImportError:  # the dreamer package is optional at this layer
        return []
    return [scheduler_lifespan]


def data_dir_problem(data_dir: Path) -> str | None:
    """Why ``data_dir`` cannot hold the server's files (embedded Postgres, secret, first key), or None.

    Checked by writing a file there: permissions alone say nothing of read-only mounts or of root.
    """
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=data_dir):
            pass
    except OSError as exc:
        return f"data directory {data_dir} is not writable: {exc.strerror or exc}"
    return None


def serve(args: argparse.Namespace, settings: Settings) -> Any:
    """Run the API: in this process, or with ``--workers N`` as N processes (see ``cli/workers.py``)."""
    problem = data_dir_problem(settings.data_dir)
    if problem is not None:
        print(f"elephantasm serve: {problem}", file=sys.stderr)
        return 1
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
    from api.metrics import start_metrics_server
    from elephantasm.gcpause import frozen_startup_heap

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
