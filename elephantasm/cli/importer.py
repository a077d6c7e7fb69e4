"""``elephantasm events import FILE.jsonl``: batched, validated, with a progress bar."""

from __future__ import annotations

import argparse
import hashlib
import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from rich.progress import Progress

from elephantasm.cli.context import cli_runtime, console
from elephantasm.cli.lookup import find_org_id
from elephantasm.domain.errors import DomainError
from elephantasm.schemas.events import EventCreate
from elephantasm.services import events as event_svc
from elephantasm.services.anima_import import at_line, decode_line
from elephantasm.services.event_copy import copy_events
from elephantasm.settings import Settings


def parse_lines(path: Path, default_anima: str | None) -> list[EventCreate]:
    """Validate every line before anything is written, so a bad file writes nothing; a bad line is
    an error naming it and its problem, as ``animas import`` names one."""
    events = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        with at_line(number):
            obj = decode_line(line)
            if default_anima and "anima_id" not in obj:
                obj["anima_id"] = default_anima
            events.append(EventCreate.model_validate(obj))
    return events


def event_digest(event: EventCreate) -> str:
    """A hash of every field of the event as its line gives it (its anima included)."""
    canonical = json.dumps(event.model_dump(mode="json", exclude={"dedupe_key"}), sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


def with_dedupe_keys(events: list[EventCreate]) -> list[EventCreate]:
    """``events``, each line without a ``dedupe_key`` given ``import:<event digest>:<n>``.

    ``n`` counts identical lines before it in the file, so importing a file again (or a longer copy
    of it) stores nothing twice, while two identical lines (say "ok" twice) stay two events.
    """
    seen: Counter[str] = Counter()
    keyed = []
    for event in events:
        if event.dedupe_key is None:
            digest = event_digest(event)
            event = event.model_copy(update={"dedupe_key": f"import:{digest}:{seen[digest]}"})
            seen[digest] += 1
        keyed.append(event)
    return keyed


async def events_import(args: argparse.Namespace, settings: Settings) -> int:
    """Import a JSON-lines file of events (the ``POST /api/events`` shape), in batches."""
    events = with_dedupe_keys(parse_lines(Path(args.file), args.anima))
    event_svc.check_events(events, settings, datetime.now(UTC))
    created = 0
    async with cli_runtime(settings) as rt:
        org_id = await find_org_id(rt, args.org)
        with Progress(console=console) as progress:
            task = progress.add_task("importing events", total=len(events))
            for start in range(0, len(events), args.batch_size):
                chunk = events[start : start + args.batch_size]
                try:
                    # The batch path by COPY on the session's connection (no ORM rows built for the result).
                    async with rt.unit_of_work() as session:
                        stored = await copy_events(await session.connection(), org_id, chunk, rt.clock())
                except DomainError as exc:
                    raise DomainError(f"batch at line {start + 1}: {exc.detail}") from exc
                created += sum(1 for s in stored if s.created)
                progress.advance(task, len(chunk))
    console.print(f"Imported {len(events)} events ({created} new, {len(events) - created} already present).")
    return 0
