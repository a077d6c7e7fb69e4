"""Group pending events into coherent exchanges: a few turns each, bounded in tokens.

A memory should describe one exchange ("user asked X, assistant answered Y"), not a whole session
and not a single line. Events are split first by conversation (``session_id``, or a time gap when
there is none, or a long pause inside a session), then cut into exchanges of a few turns, preferring
to cut where a new inbound message starts a fresh turn.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import timedelta

from .types import EventInput

TokenCounter = Callable[[str], int]


@dataclass(frozen=True, slots=True)
class GroupingConfig:
    """Bounds for an exchange. ``soft_turns``: cut at the next inbound message once this long."""

    soft_turns: int = 4
    max_turns: int = 8
    max_tokens: int = 1200
    gap: timedelta = timedelta(minutes=30)


def approx_tokens(text: str) -> int:
    """A cheap token estimate (~4 characters a token) for when no real counter is wired in."""
    return (len(text) + 3) // 4


def event_order(event: EventInput) -> tuple:
    """The canonical order of events everywhere in the dreamer: by time, then id."""
    return (event.occurred_at, event.id)


def event_text(event: EventInput) -> str:
    """The text an event contributes to a memory (its summary when it has nothing else)."""
    return event.content or event.summary or ""


def _conversations(events: Sequence[EventInput], gap: timedelta) -> list[list[EventInput]]:
    """Split time-ordered events into conversations: per session, cut on long pauses."""
    by_session: dict[str | None, list[EventInput]] = {}
    for event in events:
        by_session.setdefault(event.session_id, []).append(event)
    conversations: list[list[EventInput]] = []
    for session_events in by_session.values():
        current: list[EventInput] = []
        for event in session_events:
            if current and event.occurred_at - current[-1].occurred_at > gap:
                conversations.append(current)
                current = []
            current.append(event)
        if current:
            conversations.append(current)
    return conversations


def _is_turn_start(event: EventInput) -> bool:
    return event.event_type == "message.in" or (event.role or "").lower() in ("user", "human")


def _exchanges(
    conversation: list[EventInput], count: TokenCounter, config: GroupingConfig
) -> Iterable[tuple[EventInput, ...]]:
    """Cut one conversation into exchanges without ever dropping an event."""
    current: list[EventInput] = []
    tokens = 0
    for event in conversation:
        cost = count(event_text(event))
        if current and (
            len(current) >= config.max_turns
            or tokens + cost > config.max_tokens
            or (len(current) >= config.soft_turns and _is_turn_start(event))
        ):
            yield tuple(current)
            current, tokens = [], 0
        current.append(event)
        tokens += cost
    if current:
        yield tuple(current)


def group_events(
    events: Iterable[EventInput],
    count_tokens: TokenCounter = approx_tokens,
    config: GroupingConfig | None = None,
) -> list[tuple[EventInput, ...]]:
    """Partition events into exchanges; every event lands in exactly one group.

    Deterministic: events are ordered by ``(occurred_at, id)`` and groups by their first event, so
    the input order does not matter. An event larger than ``max_tokens`` forms a group of its own.
    """
    config = config or GroupingConfig()
    ordered = sorted(events, key=event_order)
    groups: list[tuple[EventInput, ...]] = []
    for conversation in _conversations(ordered, config.gap):
        groups.extend(_exchanges(conversation, count_tokens, config))
    groups.sort(key=lambda group: event_order(group[0]))
    return groups
