"""Pattern-based knowledge extraction for the offline engine.

Each rule recognises one kind of first-person statement and names its subject, so that a later
statement about the same subject (``user.home_city``: "I live in Paris", then "I moved to Berlin")
is recognised as a contradiction. Rules about the speaker apply to the user's own messages only;
methods and definitions are taken from anyone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .knowledge_rules import normalise_text
from .text import DATE_PATTERN
from .types import KnowledgeType

_VAL = r"(?P<val>[^.,;:!?\n]{1,80})"
_START = r"(?:^|(?<=[.!?] ))"  # sentence start (with re.M, also each line start)
_STOP = frozenset(
    [
        "last", "since", "now", "because", "with", "for", "and", "but", "so", "when", "where", "which", "who",
        "recently", "yesterday", "today", "this", "next", "ago", "over", "than", "instead", "too", "as", "very",
        "a"
    ]
)
_SPELLING = {"colour": "color", "favourite": "favorite", "flavour": "flavor"}
_NEGATIVE = ("hate", "dislike", "detest", "can't stand", "cannot stand", "don't like", "do not like")
_DATE = re.compile(DATE_PATTERN, re.IGNORECASE)
_NOT_TERMS = frozenset(
    [
        "this", "that", "it", "he", "she", "they", "there", "what", "which", "who", "i", "you", "we", "my",
        "your", "our", "the", "a", "an"
    ]
)


@dataclass(frozen=True, slots=True)
class Fact:
    """One extracted statement, before it is tied to events and memories."""

    type: KnowledgeType
    topic: str
    subject_key: str | None
    value: str | None
    content: str
    confidence: float
    importance: float


Builder = Callable[[re.Match[str], str, str], Fact | None]  # (match, subject prefix, who) -> Fact


def slug(text: str, max_len: int = 40) -> str:
    """A subject-key segment: normalised words joined by underscores."""
    words = [_SPELLING.get(w, w) for w in normalise_text(text).split()]
    return "_".join(words)[:max_len].rstrip("_")


def clip(value: str, max_words: int) -> str | None:
    """Trim a captured value to its core: stop at a filler word, at most ``max_words`` words."""
    words = value.strip().split()
    if not words or (words[0].lower() in _STOP and words[0].lower() != "a"):
        return None  # "moved in with ...", "like this": no value to keep
    kept: list[str] = []
    for position, word in enumerate(words[:max_words]):
        if position and word.lower().strip("'\"") in _STOP:
            break
        kept.append(word)
    text = " ".join(kept).strip(" '\"()[]")
    return text or None


def _fact(type_: KnowledgeType, topic: str, key: str | None, value: str | None, content: str,
          confidence: float, importance: float) -> Fact:
    return Fact(type_, topic, key, value, content, confidence, importance)


def _favorite(m: re.Match[str], p: str, who: str) -> Fact | None:
    thing, val = slug(m["thing"]), clip(m["val"], 5)
    if not thing or not val:
        return None
    label = thing.replace("_", " ")
    return _fact("FACT", "preferences", f"{p}.favorite_{thing}", val, f"{who}'s favorite {label} is {val}.", 0.85, 0.6)


def _opinion(m: re.Match[str], p: str, who: str) -> Fact | None:
    val = clip(m["val"], 4)
    if not val or not slug(val):
        return None
    verb = m["verb"].lower()
    negative = verb in _NEGATIVE
    polarity = "dislikes" if negative else ("prefers" if verb == "prefer" else "likes")
    value = "dislikes" if negative else "likes"
    return _fact("FACT", "preferences", f"{p}.opinion.{slug(val)}", value, f"{who} {polarity} {val}.", 0.8, 0.55)


def _subject(key: str, topic: str, template: str, max_words: int, importance: float) -> Builder:
    """A builder for 'the value of one attribute of the speaker' statements."""

    def build(m: re.Match[str], p: str, who: str) -> Fact | None:
        val = clip(m["val"], max_words)
        if not val:
            return None
        return _fact("FACT", topic, f"{p}.{key}", val, template.format(who=who, val=val), 0.85, importance)

    return build


def _relation(m: re.Match[str], p: str, who: str) -> Fact | None:
    rel = m["rel"].lower()
    return _fact("FACT", "relationships", f"{p}.{rel}.name", m["val"], f"{who}'s {rel} is named {m['val']}.", 0.8, 0.7)


def _allergy(m: re.Match[str], p: str, who: str) -> Fact | None:
    val = clip(m["val"], 4)
    if not val:
        return None
    return _fact("FACT", "health", f"{p}.allergy.{slug(val)}", "allergic", f"{who} is allergic to {val}.", 0.85, 0.8)


def _plan(m: re.Match[str], p: str, who: str) -> Fact | None:
    raw = m["val"].strip()
    date = _DATE.search(raw)
    activity = clip(_DATE.sub(" ", raw).replace(" on  ", " ").strip(), 8) if date else clip(raw, 12)
    if not activity or activity.count(" ") < 1:
        return None  # "I'll see" / "I will try": too vague to remember
    activity = re.sub(r"\s+(?:on|at|in|by)$", "", activity)
    value = date.group(0) if date else activity
    key = f"{p}.plan.{slug(' '.join(activity.split()[:5]))}"
    text = f"{who} plans to {activity}" + (f" ({date.group(0)})." if date else ".")
    return _fact("FACT", "plans", key, value, text, 0.7, 0.7 if date else 0.6)


def _experience(m: re.Match[str], p: str, who: str) -> Fact | None:
    val = clip(m["val"], 8)
    if not val:
        return None
    return _fact("EXPERIENCE", "experiences", None, None, f"{who} {m['verb'].lower()} {val}.", 0.7, 0.5)


def _method(m: re.Match[str], p: str, who: str) -> Fact | None:
    goal, steps = m["goal"].strip(), m["val"].strip()
    if goal.lower().startswith("be "):
        return None  # "To be honest, ..." is a figure of speech, not a method
    return _fact("METHOD", goal[:80], None, None, f"To {goal}, {steps}.", 0.6, 0.5)


def _principle(m: re.Match[str], p: str, who: str) -> Fact | None:
    word = m["word"].capitalize()
    return _fact("PRINCIPLE", "guidelines", None, None, f"{word} {m['val'].strip()}.", 0.7, 0.65)


def _concept(m: re.Match[str], p: str, who: str) -> Fact | None:
    term = m["term"].strip()
    if term.split()[0].lower() in _NOT_TERMS:
        return None
    return _fact("CONCEPT", term[:80], None, None, f"{term} {m['verb']} {m['art']} {m['val'].strip()}.", 0.5, 0.4)


_CI = re.IGNORECASE | re.MULTILINE
_CS = re.MULTILINE  # case-sensitive: a name must be capitalised ("my dog is tired" names nobody)
_RELATIONS = (
    "wife|husband|partner|son|daughter|mother|mom|mum|father|dad|brother|sister|boss|manager|dog|cat|friend"
    "|girlfriend|boyfriend"
)


@dataclass(frozen=True, slots=True)
class Rule:
    """A pattern and its builder. The rule runs only when one of its lowercase ``needles`` occurs in
    the text: most messages match no rule, and a substring test is far cheaper than a regex scan."""

    user_only: bool
    needles: tuple[str, ...]
    pattern: re.Pattern[str]
    build: Builder


def _rule(user_only: bool, needles: tuple[str, ...], regex: str, flags: int, build: Builder) -> Rule:
    return Rule(user_only, needles, re.compile(regex, flags), build)


_RULES: tuple[Rule, ...] = (
    _rule(True, ("fav",), r"\bmy (?:favou?rite|fave) (?P<thing>[a-z]+(?: [a-z]+){0,2}) (?:is|are) " + _VAL,
          _CI, _favorite),
    _rule(True, ("i ",), r"\bI (?:(?:really|absolutely|truly|just|do) )?(?P<verb>like|love|enjoy|adore|prefer|hate"
          r"|dislike|detest|can't stand|cannot stand|don't like|do not like) " + _VAL, _CI, _opinion),
    _rule(True, ("live", "living", "moved", "relocated"),
          r"\bI(?:'m| am|'ve| have)?(?: just| now| currently| recently)* (?:live|living|moved|relocated) (?:in|to) "
          + _VAL, _CI, _subject("home_city", "location", "{who} lives in {val}.", 6, 0.7)),
    _rule(True, ("from",), r"\bI(?:'m| am) (?:originally )?from " + _VAL,
          _CI, _subject("hometown", "location", "{who} is from {val}.", 4, 0.6)),
    _rule(True, ("work at", "work for"), r"\bI (?:now |currently )?work (?:at|for) " + _VAL,
          _CI, _subject("employer", "work", "{who} works at {val}.", 5, 0.65)),
    _rule(True, ("work as",), r"\bI (?:now |currently )?work as (?:an? )?" + _VAL,
          _CI, _subject("occupation", "work", "{who} works as {val}.", 5, 0.65)),
    _rule(True, ("allergic",), r"\bI(?:'m| am) allergic to " + _VAL, _CI, _allergy),
    _rule(True, ("vegetarian", "vegan", "pescatarian", "intolerant"),
          r"\bI(?:'m| am) (?:an? )?(?P<val>vegetarian|vegan|pescatarian|lactose intolerant|gluten intolerant)\b",
          _CI, _subject("diet", "health", "{who} is {val}.", 2, 0.7)),
    _rule(True, ("going to", "gonna", "planning"),
          r"\bI(?:'m| am) (?:going to|gonna|planning to|planning on) (?P<val>[^.;!?\n]{3,120})", _CI, _plan),
    _rule(True, ("i'll", "i will", "i plan", "i intend"),
          r"\bI(?:'ll| will| plan to| intend to) (?P<val>[^.;!?\n]{3,120})", _CI, _plan),
    _rule(True, ("visited", "went to", "travel", "finished", "completed", "graduated"),
          r"\bI (?:just |recently )?(?P<verb>visited|went to|travell?ed to|finished|completed|graduated from) "
          + _VAL, _CI, _experience),
    _rule(True, ("always", "never"), _START + r"(?:please )?(?P<word>always|never) (?P<val>[^.!?\n]{3,120})",
          _CI, _principle),
    _rule(True, ("name is", "call me", "called"),
          r"\b(?i:my name is|call me|I'm called|I am called) (?P<val>[A-Z][\w'-]+(?: [A-Z][\w'-]+)?)",
          _CS, _subject("name", "identity", "{who}'s name is {val}.", 3, 0.8)),
    _rule(True, ("my ",), rf"\b(?i:my) (?P<rel>(?i:{_RELATIONS}))(?:'s name)? (?i:is) "
          r"(?:(?i:called|named) )?(?P<val>[A-Z][\w'-]+)", _CS, _relation),
    _rule(False, ("to ",), _START + r"(?i:to|in order to) (?P<goal>[^,.\n]{3,60}), (?P<val>[^.\n]{5,240})",
          _CS, _method),
    _rule(False, (" is a", " are a", " means a", " refers to a"),
          _START + r"(?P<term>[A-Z][\w+#-]*(?: [\w+#-]+){0,2}) (?P<verb>is|are|means|refers to) (?P<art>an?) "
          r"(?P<val>[^.!?\n]{8,200})", _CS, _concept),
)
_USER_RULES = _RULES
_ANYONE_RULES = tuple(rule for rule in _RULES if not rule.user_only)


def subject_prefix(author: str | None) -> str:
    """``user`` for the (single) user; ``user.<author>`` when messages name who said them."""
    name = slug(author or "")
    return "user" if name in ("", "user", "human", "me") else f"user.{name}"


def extract_facts(text: str, *, from_user: bool, author: str | None) -> Iterator[Fact]:
    """Every statement the rules recognise in one message, in rule order then text order."""
    who = author if author and subject_prefix(author) != "user" else "User"
    prefix = subject_prefix(author)
    low = text.lower()
    rules = _USER_RULES if from_user else _ANYONE_RULES
    for rule in rules:
        if not any(needle in low for needle in rule.needles):
            continue
        for match in rule.pattern.finditer(text):
            fact = rule.build(match, prefix, who)
            if fact is not None:
                yield fact
