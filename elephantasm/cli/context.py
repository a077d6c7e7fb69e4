"""Helpers shared by CLI commands: a runtime over a migrated database."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from rich.console import Console

from elephantasm.db.migrate import upgrade_async
from elephantasm.runtime import Runtime, build_runtime, resolve_database_url
from elephantasm.settings import Settings

console = Console()
err_console = Console(stderr=True)


@asynccontextmanager
async def cli_runtime(settings: Settings, migrate: bool = True, *, background: bool = True) -> AsyncIterator[Runtime]:
    """Start/resolve the database, bring the schema up to date, and yield a runtime (a command's
    work is background work: long statement limits; ``serve`` asks for the API's, ``background=False``)."""
    url = resolve_database_url(settings)
    if migrate:
        await upgrade_async(url)
    runtime = build_runtime(settings, database_url=url, background=background)
    try:
        yield runtime
    finally:
        await runtime.close()
