"""``elephantasm reembed [--anima ID]``: move stored vectors into the configured embedder's space."""

from __future__ import annotations

import argparse

from rich.progress import TimeRemainingColumn

from elephantasm.cli.context import cli_runtime, console, progress_bar
from elephantasm.services.reembed import reembed as reembed_rows
from elephantasm.services.spaces import current_space
from elephantasm.settings import Settings


async def reembed(args: argparse.Namespace, settings: Settings) -> int:
    """Re-embed every stale vector; exit 0 when none is left, 1 if some changed meanwhile."""
    async with cli_runtime(settings) as rt:
        label = f"re-embedding into {rt.embedder.space.label()}"
        with progress_bar(label, "rows", TimeRemainingColumn()) as progress:
            batch = args.batch_size or settings.reembed_batch
            space_code = await current_space(rt)
            result = await reembed_rows(
                rt.unit_of_work, rt.embedder, space_code, args.anima, batch=batch, progress=progress
            )
    console.print(f"re-embedded {result.done:,} vector(s) into {result.space}; {result.remaining:,} still stale")
    return 0 if result.remaining == 0 else 1
