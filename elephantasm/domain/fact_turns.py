"""Which turns of a memory get a vector of their own (``domain.turn_vectors``), and where they are.

The fact-bearing turns are the user's (in a chat between named people, every participant's), filler
and small talk dropped, duplicates once, at most ``turn_vectors.MAX_TURNS``; each with its line when
the memory's ``content`` holds it whole. Shared by the dreamer and anima import, so an imported
anima serves the same packs as its source. Pure.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence

from elephantasm.domain.dreaming.grouping import event_text
from elephantasm.domain.dreaming.text import speaker, speaks_for_a_person
from elephantasm.domain.dreaming.types import EventInput
from elephantasm.domain.lean import lean_text
from elephantasm.domain.turn_vectors import MAX_TURNS


def fact_turns(
    events: Mapping[uuid.UUID, EventInput], event_ids: Sequence[uuid.UUID], content: str | None
) -> list[tuple[str, str | None]]:
    """``(lean text to embed, its line in content)`` of one memory's fact-bearing turns, in order."""
    turns: dict[str, str | None] = {}
    for event in (events.get(i) for i in event_ids):
        if event is None or not speaks_for_a_person(event) or len(turns) >= MAX_TURNS:
            continue
        lean = lean_text(event_text(event))
        if lean and lean not in turns:
            line = f"{speaker(event)}: {event_text(event)}"
            turns[lean] = line if _is_whole_line(content or "", line) else None
    return list(turns.items())


def _is_whole_line(content: str, line: str) -> bool:
    """Whether ``line``'s first occurrence in ``content`` is a whole line of it."""
    at = content.find(line)
    end = at + len(line)
    return at >= 0 and (at == 0 or content[at - 1] == "\n") and (end == len(content) or content[end] == "\n")
