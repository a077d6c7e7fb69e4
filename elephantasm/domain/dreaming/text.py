"""Text helpers for the offline engine: speakers, sentences and importance signals.

One combined regex finds every signal category in a sentence in a single pass: the offline engine
must keep up with thousands of events a second, so per-sentence work stays linear and small.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .types import EventInput

_ROLE_LABELS = {"user": "User", "human": "User", "assistant": "Assistant", "ai": "Assistant",
                "system": "System", "tool": "Tool"}
_TYPE_LABELS = {"message.in": "User", "message.out": "Assistant", "tool.call": "Tool call",
                "tool.result": "Tool result", "system": "System"}

_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
_MONTHS = r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
_DAYS = r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|today|tonight|tomorrow|yesterday"
DATE_PATTERN = (
    rf"\b(?:{_MONTHS})\.? \d{{1,2}}(?:st|nd|rd|th)?(?:,? \d{{4}})?\b|\b\d{{1,2}}(?:st|nd|rd|th)? (?:of )?(?:{_MONTHS})\b"
    rf"|\b\d{{4}}-\d{{2}}-\d{{2}}\b|\b\d{{1,2}}/\d{{1,2}}(?:/\d{{2,4}})?\b|\b(?:next|this|on) (?:week|month|year|{_DAYS})\b"
    rf"|\b(?:{_DAYS})\b"
)

# Each named group is one signal category; the weights say how much it raises importance.
_SIGNALS = re.compile(
    r"(?P<decision>\b(?:decided|decide|decision|agreed|settled on|we'll go with|let's go with|chose|choosing)\b)"
    r"|(?P<preference>\b(?:like|love|prefer|hate|dislike|favou?rite|enjoy|can't stand)\b)"
    r"|(?P<commitment>\b(?:I will|I'll|we will|we'll|promise|going to|gonna|plan(?:ning)? to|need to|deadline|remind me)\b)"
    r"|(?P<marker>\b(?:remember|important|don't forget|note that|always|never|urgent)\b)"
    rf"|(?P<date>{DATE_PATTERN})"
    r"|(?P<number>\b\d+(?:[.,]\d+)?\b)"
    r"|(?P<name>(?-i:(?<=[a-z,;:] )[A-Z][a-z]{2,}))"
    r"|(?P<question>\?)",
    re.IGNORECASE,
)
SIGNAL_WEIGHTS: dict[str, float] = {
    "decision": 0.15, "preference": 0.12, "commitment": 0.12, "marker": 0.15,
    "date": 0.1, "number": 0.05, "name": 0.06, "question": 0.05,
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
    return frozenset(m.lastgroup for m in _SIGNALS.finditer(text) if m.lastgroup)


def signal_score(categories: Iterable[str]) -> float:
    """Importance implied by a set of signal categories, in [0, 1]."""
    return min(1.0, BASE_IMPORTANCE + sum(SIGNAL_WEIGHTS[c] for c in set(categories)))


def sentence_score(sentence: str, categories: frozenset[str]) -> float:
    """How informative a sentence is: its signals, preferring mid-length statements."""
    words = sentence.count(" ") + 1
    length = 0.3 if 5 <= words <= 40 else (0.1 if words > 40 else 0.0)
    return sum(SIGNAL_WEIGHTS[c] for c in categories) + length


def shorten(text: str, limit: int) -> str:
    """Cut text at a word boundary to at most ``limit`` characters, marking the cut."""
    if len(text) <= limit:
        return text
    head = text[: limit - 1].rsplit(" ", 1)[0] or text[: limit - 1]
    return head.rstrip(" ,;:") + "\u2026"
