"""Lean pack text: only what earns its tokens reaches the prompt.

Memory and turn lines lose conversational filler and repeated speaker labels ("User: A Assistant:
Noted! User: B" renders as "User: A B"); identity is at most three short lines; temporal context
and dates are kept with a query only when it is about time. Pure; the wire keeps the stored values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from elephantasm.domain.small_talk import is_small_talk_sentence

# Speaker labels the dreamer and the raw-turn renderer write ("User: …", "assistant: …"), and a named
# participant's ("Maya: …") at the start of a line or a sentence.
_LABEL = re.compile(
    r"(?:(?:^|(?<=\s))((?i:user|assistant|human|ai|system|tool call|tool result))"
    r"|(?:^|(?<=[.!?…:]\s))([A-Z][\w'-]{1,30})):\s+"
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
# Openings of content-free conversational moves: acknowledgements, empathy, offers, generic
# follow-up questions.
_FILLER_OPENING = re.compile(
    r"^(?:ok(?:ay)?|sure|got it|noted|understood|thanks|thank you|great|nice|cool|interesting|i see|i hear you|"
    r"fair enough|good to know|good taste|(?:that )?makes sense|(?:that )?sounds|that's (?:lovely|great|nice|a lot)|"
    r"sorry to hear|ha|haha|lol|oh|wow|absolutely|of course|no problem|no worries|(?:i'm )?happy to help|"
    r"let me know|tell me more|want to|want me to|do you (?:need|want)|how do you like|what do you like|"
    r"what would make|what did you like|how are they doing|say hi|it's nice when|i'll keep)(?=[\s,.!?]|$)",
    re.IGNORECASE,
)
# Everything else in a filler sentence must be one of these: one word beyond them ("Noted, no
# peanuts.") makes the sentence content.
_GENERIC = frozenset(
    "a about again all always and any are as at be but can could did do does doing for from get getting glad "
    "go goes going good got great happy have hear help helps how i i'll i'm i've if in is it it's just keep "
    "know let like lovely me mind more most much my need nice now of on or plan ready really remember say "
    "sense sharing so sounds talk telling tell that that's the them there they things this through to too "
    "us very want was we what when will with would you you're your yours context fun exciting interesting "
    "easier make makes far okay ok sure thanks thank noted understood cool wow oh ha haha lol hi".split()
)
_WORDS = re.compile(r"[a-z']+")
FILLER_MAX_WORDS = 14


def is_filler(sentence: str) -> bool:
    """Whether a sentence is a short acknowledgement or generic follow-up carrying no fact, or small
    talk (``domain.small_talk``: greetings, thanks, farewells, laughter, names addressed aside).

    Otherwise filler opens with a stock phrase not followed by a colon ("Noted: green tea." is content), has
    at most :data:`FILLER_MAX_WORDS` words, and every other word is generic (no name, number or
    subject: "Noted, no peanuts." is content).
    """
    s = sentence.strip()
    if not s or is_small_talk_sentence(s):
        return True
    opening = _FILLER_OPENING.match(s)
    if opening is None or len(s.split()) > FILLER_MAX_WORDS:
        return False
    rest = s[opening.end() :]
    return not any(ch.isdigit() for ch in rest) and set(_WORDS.findall(rest.lower())) <= _GENERIC


def _segments(text: str) -> list[tuple[str | None, str]]:
    """``(label, body)`` pieces in order; a leading piece without a label has label None."""
    out: list[tuple[str | None, str]] = []
    pos, label = 0, None
    for m in _LABEL.finditer(text):
        named = m.group(2)
        if named and label is not None and m.start() == pos and named.lower() != label.lower():
            # Nobody speaks nothing: "assistant: Noted: green tea." is the assistant's content, while a
            # doubled label ("Maya: Maya: …") is still one label.
            continue
        if m.start() > pos or label is not None:
            out.append((label, text[pos : m.start()].strip()))
        label, pos = m.group(1) or m.group(2), m.end()
    out.append((label, text[pos:].strip()))
    return [(lab, body) for lab, body in out if body or lab is not None]


@lru_cache(maxsize=16384)  # pure; the same memory lines come back compile after compile
def lean_text(text: str) -> str:
    """``text`` without filler sentences and with each speaker labelled only where it changes.

    A text that is nothing but filler becomes '' (the packer skips empty lines).
    """
    kept: list[tuple[str | None, str]] = []
    for label, body in _segments(" ".join(text.split())):
        body = " ".join(s for s in _SENTENCE.split(body) if not is_filler(s))
        if not body:
            continue
        if kept and (kept[-1][0] or "").lower() == (label or "").lower():
            kept[-1] = (kept[-1][0], f"{kept[-1][1]} {body}")
        else:
            kept.append((label, body))
    return " ".join(f"{label}: {body}" if label else body for label, body in kept)


def shorten(text: str, limit: int) -> str:
    """Whitespace collapsed, cut at a word boundary to at most ``limit`` characters (… marks a cut)."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:-")
    return cut + "…"


NAME_CHARS, PERSONALITY_CHARS, STYLE_CHARS = 120, 60, 100


@dataclass(frozen=True, slots=True)
class IdentityText:
    """The fields identity lines are made from (the stored identity row plus the anima)."""

    name: str
    description: str | None = None
    personality_type: str | None = None
    communication_style: str | None = None
    prose: str | None = None


def _first_sentence(text: str) -> str:
    return _SENTENCE.split(" ".join(text.split()), 1)[0]


def identity_lines(identity: IdentityText, *, brief: bool) -> list[tuple[str, str]]:
    """``(key, line)`` pairs: name (with the description), personality, style; ``brief`` → name only.

    Prose stands in for the style only when no style is recorded; self-reflection data and
    statistics are never rendered.
    """
    name = identity.name if not identity.description else f"{identity.name} — {identity.description}"
    lines = [("name", f"Name: {shorten(name, NAME_CHARS)}")]
    if brief:
        return lines
    if identity.personality_type and identity.personality_type.strip():
        lines.append(("personality", f"Personality: {shorten(identity.personality_type, PERSONALITY_CHARS)}"))
    style = identity.communication_style or (_first_sentence(identity.prose) if identity.prose else None)
    if style and style.strip():
        lines.append(("style", f"Style: {shorten(style, STYLE_CHARS)}"))
    return lines


_WORD = re.compile(r"[a-z0-9']+")
TEMPORAL_QUERY_WORDS = frozenset(
    "when since long ago recent recently lately last latest yesterday today tonight earlier before previous "
    "previously week weekend month year time date".split()
)

# Words asking for what is recent or current: they keep the presets' recency weights
# (presets.query_weights). A separate list: "When did Maya run the race?" asks for a date however old
# (wants_dates), and recency would rank last week's chatter above the answer.
RECENCY_QUERY_WORDS = frozenset(
    "recent recently yesterday today tonight lately earlier ago latest last now currently "
    "week weekend morning afternoon evening month before previous previously".split()
)


def wants_temporal(query: str | None) -> bool:
    """Temporal context earns its line without a query, or when the query asks about time."""
    if query is None:
        return True
    return bool(set(_WORD.findall(query.lower())) & TEMPORAL_QUERY_WORDS)


# Words that make the order of statements matter: the current value of something that changed.
CURRENT_STATE_WORDS = frozenset("now currently current still anymore latest newest first order".split())
# Calendar words: a question about a weekday, a month or a span ("what did I do on Monday?", "how
# many weeks…") can only be answered from lines that carry their dates. ("may" is left out: as a
# verb it is too common in questions that have nothing to do with time.)
CALENDAR_WORDS = frozenset(
    "tomorrow morning afternoon evening night hours days weeks weekends months years "
    "monday tuesday wednesday thursday friday saturday sunday january february march april june july "
    "august september october november december".split()
)
_DATED_QUERY_WORDS = TEMPORAL_QUERY_WORDS | CURRENT_STATE_WORDS | CALENDAR_WORDS


def wants_dates(query: str | None) -> bool:
    """Whether memory lines carry their dates: without a query, or when the query asks about time or
    about the current state of something (which of two statements is newer). A date prefix costs
    about as many tokens as a short statement, so a factual query's pack goes without."""
    if query is None:
        return True
    words = set(_WORD.findall(query.lower()))
    return bool(words & _DATED_QUERY_WORDS)
