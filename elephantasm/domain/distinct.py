"""Near-duplicate lines: a line that restates a better-ranked line of its layer adds no information.

People repeat themselves, and one exchange is often distilled into memories whose best turns read
the same; served twice, such a line spends a small pack's tokens on nothing new. :func:`line_key`
maps a line to what it says, ignoring case, punctuation, short particles ("lol", "ok") and common
typing slips (swapped and doubled letters); numbers and negations are kept exactly. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date, datetime
from functools import lru_cache

_TOKEN = re.compile(r"[^\W_]+")
_APOSTROPHES = str.maketrans("", "", "'\u2019")
_DOUBLED = re.compile(r"(.)\1+")
# Words shorter than this carry no subject of their own (particles, pronouns, interjections).
MIN_WORD_CHARS = 4
# Short words that reverse what a line says: never dropped as particles.
NEGATIONS = frozenset({"no", "not", "nor"})


def _canonical(word: str) -> str:
    """A word's letters, runs collapsed and sorted: swapped and doubled letters map together."""
    if any(ch.isdigit() for ch in word):
        return word
    return "".join(sorted(_DOUBLED.sub(r"\1", word)))


@lru_cache(maxsize=16384)  # pure; the same memory lines come back compile after compile
def line_key(text: str) -> str:
    """What ``text`` says, for spotting restatements: its content words (and numbers) in order,
    canonicalised (see the module doc). A text of short words only keys on all its words."""
    words = _TOKEN.findall(text.casefold().translate(_APOSTROPHES))
    kept = [w for w in words if len(w) >= MIN_WORD_CHARS or w in NEGATIONS or any(ch.isdigit() for ch in w)] or words
    return " ".join(_canonical(w) for w in kept)


def said_on_several_days(lines: Sequence[tuple[str, datetime | None]]) -> list[bool]:
    """Per ``(text, when)``: whether a line saying the same (:func:`line_key`) is dated on another day.

    A remark made again and again ("work has been busy", "the weather is so grey") is a habit of
    speech, not news; the same turn shown by two overlapping memories (one day) is one remark.
    """
    days: dict[str, set[date | None]] = {}
    keys = [line_key(text) for text, _ in lines]
    for key, (_, when) in zip(keys, lines, strict=True):
        days.setdefault(key, set()).add(when.date() if when is not None else None)
    return [len(days[key]) > 1 for key in keys]
