"""``elephantasm dream ANIMA`` (one run, with a progress bar and a summary) and ``elephantasm dreamer``."""

from __future__ import annotations

import argparse
import uuid

from rich.table import Table

from elephantasm.cli.context import cli_runtime, console, err_console, progress_bar
from elephantasm.cli.lookup import find_anima
from elephantasm.db.models import DreamRun
from elephantasm.domain.errors import ConflictError, DomainError
from elephantasm.services.dreams import run_dream
from elephantasm.settings import Settings


def summary_table(run: DreamRun) -> Table:
    """What a run did, one row per figure."""
    counts = dict(run.counts or {})
    timings = counts.pop("timings", {})
    duration = (run.finished_at - run.started_at).total_seconds() if run.finished_at else 0.0
    table = Table("", "", title=f"dream run {run.id}", show_header=False)
    rows = [
        ("status", run.status),
        ("engine", f"{run.engine}{' / ' + run.model if run.model else ''}"),
        ("events distilled", str(run.events_read)),
        ("memories created", str(run.memories_created)),
        ("knowledge created", str(run.knowledge_created)),
        *((name.replace("_", " "), str(value)) for name, value in sorted(counts.items()) if value),
        ("LLM calls", str(run.llm_calls)),
        ("tokens (prompt / completion)", f"{run.prompt_tokens} / {run.completion_tokens}"),
        ("duration", f"{duration:.2f} s"),
        *((f"  {phase} time", f"{seconds:.2f} s") for phase, seconds in sorted(timings.items()) if phase != "total"),
    ]
    if run.events_read and duration:
        rows.append(("throughput", f"{run.events_read / duration:,.0f} events/s"))
    if run.error:
        rows.append(("error", run.error))
    for name, value in rows:
        table.add_row(name, value)
    return table


def _is_id(ref: str) -> bool:
    try:
        uuid.UUID(ref)
    except ValueError:
        return False
    return True


async def dream(args: argparse.Namespace, settings: Settings) -> int:
    """Run one dream for an anima now; exit 0 if it completed, 1 if it failed, 2 if busy/not found."""
    async with cli_runtime(settings) as rt:
        try:  # an id names an anima of any org (this is an operator's tool); a name is looked up in --org
            anima = await find_anima(rt, args.anima, None if _is_id(args.anima) else args.org)
        except DomainError as exc:
            err_console.print(f"[red]{exc.detail}[/red]")
            return 2
        with progress_bar("dreaming", "events") as progress:
            try:
                run = await run_dream(rt.dreams, anima.org_id, anima.id, trigger="cli", progress=progress)
            except ConflictError as exc:
                err_console.print(f"[yellow]{exc.detail}[/yellow]")
                return 2
    console.print(summary_table(run))
    return 0 if run.status == "completed" else 1


async def dreamer(args: argparse.Namespace, settings: Settings) -> int:
    """Run the dreamer scheduler alone until interrupted."""
    from dreamer.worker import run_worker

    async with cli_runtime(settings) as rt:
        console.print(
            f"Dreamer running (sweep every {settings.dreamer_sweep_seconds}s, threshold "
            f"{settings.dreamer_trigger_events} events); Ctrl-C to stop."
        )
        await run_worker(rt)
    console.print("Dreamer stopped.")
    return 0
