"""Text helpers for the offline engine: speakers, sentences and importance signals.

The offline engine must keep up with thousands of events a second, so per-sentence work stays
linear and small.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

from .types import EventInput

_ROLE_LABELS = {
    "user": "User",
    "human": "User",
    "assistant": "Assistant",
    "ai": "Assistant",
    "system": "System",
    "tool": "Tool",
}
_TYPE_LABELS = {
    "message.in": "User",
    "message.out": "Assistant",
    "tool.call": "Tool call",
    "tool.result": "Tool result",
    "system": "System",
}

_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
_MONTHS = (
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?"
    r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
_DAYS = r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|today|tonight|tomorrow|yesterday"
DATE_PATTERN = (
    rf"\b(?:{_MONTHS})\.? \d{{1,2}}(?:st|nd|rd|th)?(?:,? \d{{4}})?\b"  # May 3rd, 2024
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)? (?:of )?(?:{_MONTHS})\b"  # 3rd of May
    r"|\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b"  # 2024-05-03, 5/3/24
    rf"|\b(?:next|this|on) (?:week|month|year|{_DAYS})\b|\b(?:{_DAYS})\b"
)

_CALENDAR_NAME = re.compile(rf"\b(?:{_MONTHS}|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b", re.I)


def calendar_case(date: str) -> str:
    """A date as written with its month and weekday names capitalised ("april 17" reads "April 17")."""
    return _CALENDAR_NAME.sub(lambda m: m.group(0).capitalize(), date)


# Signals are found with word-set lookups and a few cheap regexes rather than one big alternation:
# this runs on every sentence of every event.
_WORD = re.compile(r"[a-z0-9']+")
_WORD_SIGNALS: dict[str, frozenset[str]] = {
    "decision": frozenset(["decided", "decide", "decision", "agreed", "chose", "choosing"]),
    "preference": frozenset(["like", "love", "prefer", "hate", "dislike", "favorite", "favourite", "enjoy"]),
    "commitment": frozenset(["i'll", "we'll", "promise", "gonna", "deadline"]),
    "marker": frozenset(["remember", "important", "always", "never", "urgent"]),
}
_PHRASE_SIGNALS: dict[str, tuple[str, ...]] = {
    "decision": ("settled on", "go with"),
    "preference": ("can't stand",),
    "commitment": ("i will", "we will", "going to", "plan to", "planning to", "need to", "remind me"),
    "marker": ("don't forget", "note that"),
}
_DATE_WORDS = frozenset(
    "jan january feb february mar march apr april may jun june jul july aug august sep sept september oct "
    "october nov november dec december monday tuesday wednesday thursday friday saturday sunday today tonight "
    "tomorrow yesterday week month year".split()
)
_DATE = re.compile(DATE_PATTERN, re.IGNORECASE)
_DIGIT = re.compile(r"\d")
_NAME = re.compile(r"[a-z,;:] [A-Z][a-z]{2,}")
SIGNAL_WEIGHTS: dict[str, float] = {
    "decision": 0.15,
    "preference": 0.12,
    "commitment": 0.12,
    "marker": 0.15,
    "date": 0.1,
    "number": 0.05,
    "name": 0.06,
    "question": 0.05,
}
BASE_IMPORTANCE = 0.2
_SCAN_LIMIT = 4000  # characters of one event scanned for summary sentences; a huge tool dump adds nothing


def speaker(event: EventInput) -> str:
    """Who said it, for "who said what" summaries: author, else role, else the event type."""
    if event.author:
        return event.author
    if event.role:
        return _ROLE_LABELS.get(event.role.lower(), event.role)
    return _TYPE_LABELS.get(event.event_type, event.event_type)


def own_text(event: EventInput) -> str:
    """The event's text without a leading copy of its speaker's label ("Maya: Maya: hi" reads "Maya: hi")."""
    text = event.content or event.summary or ""
    label = speaker(event)
    head = text[: len(label) + 1]
    if head.lower() == f"{label.lower()}:":
        return text[len(label) + 1 :].lstrip()
    return text


def speaks_for_a_person(event: EventInput) -> bool:
    """Whether the event is a person's message, whose facts are about its speaker: the user's, or a
    named participant's in a chat between people (an ``author`` on a message)."""
    return is_user_turn(event) or (bool(event.author) and event.event_type in ("message.in", "message.out"))


def is_user_turn(event: EventInput) -> bool:
    """Whether the event was said by the person the anima talks to."""
    role = (event.role or "").lower()
    return role in ("user", "human") or (not role and event.event_type == "message.in")


def is_agent_turn(event: EventInput) -> bool:
    """Whether the event is the anima's own message."""
    role = (event.role or "").lower()
    return role in ("assistant", "ai") or (not role and event.event_type == "message.out")


def clean(text: str) -> str:
    """Typographic quotes to ASCII so that patterns match however the client typed them."""
    return text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')


def sentences(text: str) -> list[str]:
    """Non-empty sentences of (the scanned head of) a text."""
    return [s.strip() for s in _SENTENCE_SPLIT.split(text[:_SCAN_LIMIT]) if s.strip()]


def signals(text: str) -> frozenset[str]:
    """The signal categories present in a text."""
    low = text.lower()
    words = set(_WORD.findall(low))
    found = {name for name, vocabulary in _WORD_SIGNALS.items() if not words.isdisjoint(vocabulary)}
    found.update(
        name for name, phrases in _PHRASE_SIGNALS.items() if name not in found and any(p in low for p in phrases)
    )
    has_digit = _DIGIT.search(text) is not None
    if has_digit:
        found.add("number")
    if (has_digit or not words.isdisjoint(_DATE_WORDS)) and _DATE.search(text):
        found.add("date")
    if _NAME.search(text):
        found.add("name")
    if "?" in text:
        found.add("question")
    return frozenset(found)


def signal_score(categories: Iterable[str]) -> float:
    """Importance implied by a set of signal categories, in [0, 1]."""
    # fsum is exactly rounded, so the result cannot depend on set iteration order (hash seed).
    return min(1.0, BASE_IMPORTANCE + math.fsum(SIGNAL_WEIGHTS[c] for c in set(categories)))


def sentence_score(sentence: str, categories: frozenset[str]) -> float:
    """How informative a sentence is: its signals, preferring mid-length statements."""
    words = sentence.count(" ") + 1
    length = 0.3 if 5 <= words <= 40 else (0.1 if words > 40 else 0.0)
    return math.fsum(SIGNAL_WEIGHTS[c] for c in categories) + length


def shorten(text: str, limit: int) -> str:
    """Cut text at a word boundary to at most ``limit`` characters, marking the cut."""
    if len(text) <= limit:
        return text
    head = text[: limit - 1].rsplit(" ", 1)[0] or text[: limit - 1]
    return head.rstrip(" ,;:") + "\u2026"
