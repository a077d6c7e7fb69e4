"""Relative time in a turn ("last week", "yesterday", "two days ago", "next month") as absolute dates.

A memory read months later cannot answer "when did …" from "yesterday"; resolved against the time
the turn was said, it can: "yesterday (≈ 2025-03-02)". Only expressions with one reading are
resolved: a day count, a calendar week (Monday to Sunday), month or year relative to the turn's own,
in UTC. Vague ones ("a few days ago", "recently") and weekday names ("last Friday": this week's or
the one before?) are left alone. Pure and deterministic.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

_NUMBERS = {"a": 1, "an": 1, "a couple of": 2, "couple of": 2}
_NUMBERS.update((word, n) for n, word in enumerate("one two three four five six seven eight nine ten".split(), 1))
_COUNT = r"(?P<n>\d{1,2}|" + "|".join(sorted(_NUMBERS, key=len, reverse=True)) + ")"
PATTERN = re.compile(
    r"\b(?:(?P<day>yesterday|today|tonight|tomorrow|the day before yesterday|the day after tomorrow)"
    rf"|{_COUNT} (?P<unit>days?|weeks?|months?|years?) ago"
    r"|(?P<rel>last|this|next) (?P<span>week|weekend|month|year))\b",
    re.IGNORECASE,
)
# Substrings every expression contains: most turns hold none, and a substring test is far cheaper than the regex.
_NEEDLES = ("yesterday", "today", "tonight", "tomorrow", " ago", "last ", "next ", "this w", "this m", "this y")
_DAY_OFFSETS = {
    "yesterday": -1,
    "today": 0,
    "tonight": 0,
    "tomorrow": 1,
    "the day before yesterday": -2,
    "the day after tomorrow": 2,
}
_STEP = {"last": -1, "this": 0, "next": 1}


def _month(day: date, step: int) -> str:
    index = day.year * 12 + day.month - 1 + step
    return f"{index // 12:04d}-{index % 12 + 1:02d}"


def _span(first: date, last: date) -> str:
    """``2025-03-03..09`` within a month, ``2025-02-24..03-02`` across months, the full date across years."""
    if first.year != last.year:
        return f"{first.isoformat()}..{last.isoformat()}"
    if first.month != last.month:
        return f"{first.isoformat()}..{last.isoformat()[5:]}"
    return f"{first.isoformat()}..{last.day:02d}"


def _week(day: date, step: int) -> str:
    monday = day - timedelta(days=day.weekday()) + timedelta(weeks=step)
    return _span(monday, monday + timedelta(days=6))


def _weekend(day: date, step: int) -> str:
    """The Saturday–Sunday of the calendar week ``step`` weeks from ``day``'s."""
    saturday = day - timedelta(days=day.weekday()) + timedelta(days=5, weeks=step)
    return _span(saturday, saturday + timedelta(days=1))


def resolve(expression: str, at: datetime) -> str | None:
    """The absolute date or span ``expression`` (one :data:`PATTERN` match) means when said at ``at``."""
    match = PATTERN.fullmatch(expression.strip())
    if match is None:
        return None
    day = at.date()
    if match["day"]:
        return (day + timedelta(days=_DAY_OFFSETS[match["day"].lower()])).isoformat()
    if match["unit"]:
        n, unit = _NUMBERS.get(match["n"].lower()) or int(match["n"]), match["unit"].lower().rstrip("s")
        if unit == "day":
            return (day - timedelta(days=n)).isoformat()
        if unit == "week":
            return _week(day, -n)
        if unit == "month":
            return _month(day, -n)
        return f"{day.year - n:04d}"
    step, span = _STEP[match["rel"].lower()], match["span"].lower()
    if span == "week":
        return _week(day, step)
    if span == "weekend":
        return _weekend(day, step)
    if span == "month":
        return _month(day, step)
    return f"{day.year + step:04d}"


def _may_hold(text: str) -> bool:
    low = text.lower()
    return any(needle in low for needle in _NEEDLES)


def dates_in(text: str, at: datetime) -> list[str]:
    """Every resolvable relative expression of ``text`` as its absolute date or span, in order."""
    if not _may_hold(text):
        return []
    return [d for m in PATTERN.finditer(text) if (d := resolve(m.group(0), at)) is not None]


def annotate(text: str, at: datetime) -> str:
    """``text`` with each resolvable relative expression followed by its date: "last week (≈ 2025-02-24..03-02)"."""
    if not _may_hold(text) or not PATTERN.search(text):
        return text

    def add(m: re.Match[str]) -> str:
        resolved = resolve(m.group(0), at)
        return m.group(0) if resolved is None else f"{m.group(0)} (≈ {resolved})"

    return PATTERN.sub(add, text)
