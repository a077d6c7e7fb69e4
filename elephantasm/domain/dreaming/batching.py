"""Pack exchanges into LLM calls, and render events as numbered prompt lines.

An LLM call is expensive and mostly fixed-cost, so several exchanges share one call, bounded by
event count and prompt tokens. Exchanges are never split across calls: the model sees each one whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .grouping import TokenCounter, event_text
from .text import shorten, speaker
from .types import EventInput

MAX_EVENT_CHARS = 6000  # one huge tool dump must not crowd out the rest of a call


@dataclass(frozen=True, slots=True)
class BatchLimits:
    """Per-call bounds: 40 events or ~6k prompt tokens keeps 100 short events within 3 calls."""

    max_events: int = 40
    max_tokens: int = 6000


def render_event(event: EventInput) -> str:
    """One event as the model sees it: ``[index] time | session | speaker (type): text``."""
    text = shorten(event_text(event), MAX_EVENT_CHARS).replace("\n", "\n    ")
    when = event.occurred_at.isoformat(timespec="seconds")
    return f"[{event.index}] {when} | session {event.session_id or '-'} | {speaker(event)} ({event.event_type}): {text}"


def batch_groups(
    groups: Sequence[tuple[EventInput, ...]], count_tokens: TokenCounter, limits: BatchLimits
) -> list[list[EventInput]]:
    """Greedily pack consecutive groups into batches within ``limits``.

    A group that alone exceeds a limit still gets a batch of its own: no event is ever dropped.
    """
    batches: list[list[EventInput]] = []
    current: list[EventInput] = []
    tokens = 0
    for group in groups:
        cost = sum(count_tokens(render_event(e)) for e in group)
        if current and (len(current) + len(group) > limits.max_events or tokens + cost > limits.max_tokens):
            batches.append(current)
            current, tokens = [], 0
        current.extend(group)
        tokens += cost
    if current:
        batches.append(current)
    return batches
