"""Helpers shared by CLI commands: a runtime over a migrated database and the progress bar of a
long command. A domain error a command raises is reported by ``cli/main.py`` (one line, exit 1)."""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn

from elephantasm.db.migrate import upgrade_async
from elephantasm.runtime import Runtime, build_runtime, resolve_database_url
from elephantasm.settings import Settings

console = Console()
err_console = Console(stderr=True)

Progressed = Callable[[int, int], None]


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


def with_runtime(
    body: Callable[[Runtime, argparse.Namespace], Awaitable[int]],
) -> Callable[[argparse.Namespace, Settings], Awaitable[int]]:
    """A command running ``body`` over :func:`cli_runtime`."""

    async def run(args: argparse.Namespace, settings: Settings) -> int:
        async with cli_runtime(settings) as rt:
            return await body(rt, args)

    return run


@contextmanager
def progress_bar(label: str, unit: str, *more: ProgressColumn) -> Iterator[Progressed]:
    """A transient bar ``label ━━━ done/total unit elapsed`` (then ``more`` columns); yields the
    ``progress(done, total)`` callback the services report through."""
    columns = (TextColumn(label), BarColumn(), MofNCompleteColumn(), TextColumn(unit), TimeElapsedColumn(), *more)
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task(label, total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield progress
