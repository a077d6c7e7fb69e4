"""``elephantasm animas purge|export|import``: erasure and moving one anima between servers."""

from __future__ import annotations

import argparse
import uuid

from elephantasm.cli.context import cli_runtime, console, err_console
from elephantasm.domain.errors import DomainError
from elephantasm.services.purge import purge_anima
from elephantasm.settings import Settings


def add_parser(animas: argparse._SubParsersAction) -> None:
    """Register the commands under ``elephantasm animas``."""
    purge = animas.add_parser("purge", help="erase every row of an anima for good (erasure requests)")
    purge.add_argument("anima", help="anima id (live or already deleted)")
    purge.add_argument("--yes", action="store_true", help="confirm: this cannot be undone")
    purge.set_defaults(func=animas_purge)


def _anima_id(value: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(value)
    except ValueError:
        err_console.print(f"[red]anima: {value!r} is not a valid UUID[/red]")
        return None


async def animas_purge(args: argparse.Namespace, settings: Settings) -> int:
    """Erase an anima and everything of it; exit 2 without ``--yes``, 1 if it does not exist."""
    if not args.yes:
        err_console.print("refusing to purge without --yes: every row of the anima is erased for good")
        return 2
    anima_id = _anima_id(args.anima)
    if anima_id is None:
        return 1
    async with cli_runtime(settings) as rt:
        try:
            done = await purge_anima(rt, None, anima_id)
        except DomainError as exc:
            err_console.print(f"[red]{exc.detail}[/red]")
            return 1
    console.print(f"Purged anima {done.anima_id}: {done.events} events, {done.memories} memories, "
                  f"{done.knowledge} knowledge items and everything derived from them.")
    return 0
