"""Temporal context: how long since the anima last interacted, as data and as one prompt line.

Pure: ``as_of`` is an argument (pass the quantised bucket so the text is stable inside it).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import UTC, datetime

from elephantasm.domain.scoring import seconds_between

NO_HISTORY_TEXT = "No previous interactions."

# (upper bound in seconds, unit seconds, unit name): the first bound above the age picks the unit.
_UNITS: tuple[tuple[float, float, str], ...] = (
    (3600, 60, "minute"),
    (86400, 3600, "hour"),
    (14 * 86400, 86400, "day"),
    (60 * 86400, 7 * 86400, "week"),
    (730 * 86400, 30 * 86400, "month"),
    (float("inf"), 365 * 86400, "year"),
)


@dataclass(frozen=True, slots=True)
class TemporalContext:
    """Wire shape ``{last_event_at, hours_ago, memory_summary, formatted}``."""

    last_event_at: datetime | None
    hours_ago: float | None
    memory_summary: str | None
    formatted: str

    def as_dict(self) -> dict[str, object]:
        """Plain dict (datetimes left as objects for the wire layer to encode)."""
        return asdict(self)


def humanise_duration(seconds: float) -> str:
    """'less than a minute', '1 minute', '5 hours', '3 days', '2 weeks', '4 months', '2 years'.

    Counts floor, so a duration is never overstated (47 h → "1 day").
    """
    seconds = max(0.0, seconds)
    if seconds < 60:
        return "less than a minute"
    unit, name = next((unit, name) for bound, unit, name in _UNITS if seconds < bound)  # the last bound is inf
    n = int(seconds // unit)
    return f"{n} {name}" + ("" if n == 1 else "s")


def temporal_context(
    last_event_at: datetime | None, as_of: datetime, memory_summary: str | None = None
) -> TemporalContext:
    """Temporal context at ``as_of``; an event after ``as_of`` counts as 'just now'."""
    if last_event_at is None:
        return TemporalContext(None, None, memory_summary, NO_HISTORY_TEXT)
    last = last_event_at.replace(tzinfo=UTC) if last_event_at.tzinfo is None else last_event_at
    age = seconds_between(last, as_of)
    text = humanise_duration(age) + " since last interaction"
    return TemporalContext(
        last_event_at=last,
        hours_ago=round(age / 3600.0, 2),
        memory_summary=memory_summary,
        formatted=text[0].upper() + text[1:],
    )
