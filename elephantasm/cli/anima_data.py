"""``elephantasm animas purge|export|import``: erasure and moving one anima between servers."""

from __future__ import annotations

import argparse
import sys
from contextlib import nullcontext
from pathlib import Path

from elephantasm.cli.context import console, err_console, with_runtime
from elephantasm.cli.lookup import find_org_id
from elephantasm.domain.errors import NotFoundError
from elephantasm.runtime import Runtime
from elephantasm.services import animas as anima_svc
from elephantasm.services.anima_export import export_lines
from elephantasm.services.anima_import import embed_parsed, parse_export, write_import
from elephantasm.services.purge import purge_anima
from elephantasm.services.spaces import current_space
from elephantasm.settings import Settings


async def animas_purge(args: argparse.Namespace, settings: Settings) -> int:
    """Erase an anima and everything of it; exit 2 without ``--yes``, 1 if it does not exist."""
    if not args.yes:
        err_console.print("refusing to purge without --yes: every row of the anima is erased for good")
        return 2
    return await _purge(args, settings)


@with_runtime
async def _purge(rt: Runtime, args: argparse.Namespace) -> int:
    async with rt.unit_of_work() as session:
        done = await purge_anima(session, None, args.anima, rt.anima_purge_hooks)
    console.print(
        f"Purged anima {done.anima_id}: {done.events} events, {done.memories} memories, "
        f"{done.knowledge} knowledge items and everything derived from them."
    )
    return 0


@with_runtime
async def animas_export(rt: Runtime, args: argparse.Namespace) -> int:
    """Write an anima (of any org) as JSON lines to ``--output`` or standard output."""
    anima_id = args.anima
    async with rt.read_session() as session:
        org_id = await anima_svc.org_of_anima(session, anima_id)
    if org_id is None:
        raise NotFoundError(f"anima {anima_id} not found")
    count = 0
    with open(args.output, "w", encoding="utf-8") if args.output else nullcontext(sys.stdout) as out:
        async with rt.read_session() as session:  # a session of its own: the export is one snapshot
            async for line in export_lines(session, org_id, anima_id):
                out.write(line)
                count += 1
    if args.output:
        console.print(f"Exported anima {anima_id}: {count} lines to {args.output}.")
    return 0


@with_runtime
async def animas_import(rt: Runtime, args: argparse.Namespace) -> int:
    """Create a new anima in ``--org`` from an export file; prints its id last."""
    lines = Path(args.file).read_text(encoding="utf-8").splitlines()
    org_id = await find_org_id(rt, args.org)
    parsed = parse_export(lines, rt.settings, rt.clock())
    vectors = await embed_parsed(rt.embedder, parsed)
    space = await current_space(rt)
    async with rt.unit_of_work() as session:
        anima_id = await write_import(session, org_id, parsed, vectors, args.name, space)
    console.print(f"Imported {len(lines)} lines into org '{args.org}' as a new anima.")
    print(anima_id)
    return 0
