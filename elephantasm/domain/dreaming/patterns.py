"""Pattern-based knowledge extraction for the offline engine.

Each rule recognises one kind of first-person statement and names its subject, so that a later
statement about the same subject (``user.home_city``: "I live in Paris", then "I moved to Berlin")
is recognised as a contradiction. Rules about the speaker apply to the user's own messages only;
methods and definitions are taken from anyone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from elephantasm.domain.relative_dates import PATTERN as RELATIVE_TIME

from .knowledge_rules import normalise_text
from .text import DATE_PATTERN, calendar_case
from .types import KnowledgeType
from .wellformed import malformation

_VAL = r"(?P<val>[^.,;:!?\n]{1,80})"
_START = r"(?:^|(?<=[.!?] ))"  # sentence start (with re.M, also each line start)
_STOP = frozenset(
    "last since now because with for and but so when where which who recently yesterday today this next ago "
    "over than instead too as very".split()
    # chat slang that ends a clause ("I like variety ngl"), never part of the value
    + "lol lmao ngl fr tbh imo rn btw haha tho honestly".split()
)
_SPELLING = {"colour": "color", "favourite": "favorite", "flavour": "flavor"}
_NEGATIVE = ("hate", "dislike", "detest", "can't stand", "cannot stand", "don't like", "do not like")
_DATE = re.compile(DATE_PATTERN, re.IGNORECASE)
_AMOUNT = re.compile(r"\s+a (?:lot|bit|little|while|ton|few|couple)\b.*", re.IGNORECASE)  # "… a lot": no part of it
_NOT_TERMS = frozenset("this that it he she they there what which who i you we my your our the a an".split())


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
    words = _AMOUNT.sub("", value).strip().split()
    if not words or words[0].lower() in _STOP:
        return None  # "moved in with ...", "like this": no value to keep
    kept: list[str] = []
    for position, word in enumerate(words[:max_words]):
        if position and word.lower().strip("'\"") in _STOP:
            break
        kept.append(word)
    text = " ".join(kept).strip(" '\"()[]")
    return text or None


def _favorite(m: re.Match[str], p: str, who: str) -> Fact | None:
    thing, val = slug(m["thing"]), clip(m["val"], 5)
    if not thing or not val:
        return None
    label = thing.replace("_", " ")
    return Fact("FACT", "preferences", f"{p}.favorite_{thing}", val, f"{who}'s favorite {label} is {val}.", 0.85, 0.6)


# What an opinion's object may not open with: a clause or a pronoun is no thing one likes
# ("likes how some of the", "likes that needs", "likes it").
_NOT_OBJECT_START = frozenset(
    "how that what when where why who which whether if it this these those them there here so such".split()
)


def _opinion(m: re.Match[str], p: str, who: str) -> Fact | None:
    val = clip(m["val"], 4)
    if not val or not slug(val) or val.split()[0].lower() in _NOT_OBJECT_START:
        return None
    verb = m["verb"].lower()
    negative = verb in _NEGATIVE
    polarity = "dislikes" if negative else ("prefers" if verb == "prefer" else "likes")
    value = "dislikes" if negative else "likes"
    return Fact("FACT", "preferences", f"{p}.opinion.{slug(val)}", value, f"{who} {polarity} {val}.", 0.8, 0.55)


def _subject(key: str, topic: str, template: str, max_words: int, importance: float) -> Builder:
    """A builder for 'the value of one attribute of the speaker' statements."""

    def build(m: re.Match[str], p: str, who: str) -> Fact | None:
        val = clip(m["val"], max_words)
        if not val:
            return None
        return Fact("FACT", topic, f"{p}.{key}", val, template.format(who=who, val=val), 0.85, importance)

    return build


def _relation(m: re.Match[str], p: str, who: str) -> Fact | None:
    rel = " ".join(m["rel"].lower().split())
    if m["val"].split()[0] in _NOT_NAMES:
        return None
    key = f"{p}.{slug(rel)}.name"
    return Fact("FACT", "relationships", key, m["val"], f"{who}'s {rel} is named {m['val']}.", 0.8, 0.7)


def _event_date(m: re.Match[str], p: str, who: str) -> Fact | None:
    thing = m["thing"].strip()
    words = thing.lower().split()
    if not words or words[0] in _NOT_TERMS or words[-1] in _STOP or not slug(thing):
        return None
    date = calendar_case(m["date"])
    return Fact("FACT", "plans", f"{p}.event.{slug(thing)}", date, f"{who}'s {thing} is on {date}.", 0.8, 0.7)


def _allergy(m: re.Match[str], p: str, who: str) -> Fact | None:
    val = clip(m["val"], 4)
    if not val:
        return None
    return Fact("FACT", "health", f"{p}.allergy.{slug(val)}", "allergic", f"{who} is allergic to {val}.", 0.85, 0.8)


_GOING_PLACE = re.compile(r"^(?:(?i:a|an|the|some|my|our|his|her|their)\b|[A-Z])")


def _timed(m: re.Match[str]) -> bool:
    """Whether the message holding the match names a date or a relative time ("on May 3", "next week")
    beyond the day it was said ("tonight" dates an errand, not a plan)."""
    times = (t.group(0).lower() for pattern in (_DATE, RELATIVE_TIME) for t in pattern.finditer(m.string))
    return any(t not in ("today", "tonight") for t in times)


def _plan(m: re.Match[str], p: str, who: str) -> Fact | None:
    raw = m["val"].split(",", 1)[0].strip()  # "…, Jonas, one step at a time": the plan ends at the comma
    frame = m["frame"].lower().strip()
    # Everyday future ("I'll bring snacks", "gonna head out") is an errand or a mood unless it has a
    # date; only a deliberate frame ("planning to", "intend to") makes an undated plan.
    if frame in ("going to", "gonna", "'ll", "will") and not _timed(m):
        return None
    # "I'm going to a festival / to Lisbon": going somewhere, not a verb.
    place = frame == "going to" and _GOING_PLACE.match(raw) is not None
    date = _DATE.search(raw)
    activity = clip(_DATE.sub(" ", raw).replace(" on  ", " ").strip(), 8) if date else clip(raw, 12)
    if activity and place:
        activity = f"go to {activity}"
    if not activity or activity.count(" ") < 1:
        return None  # "I'll see" / "I will try": too vague to remember
    activity = re.sub(r"\s+(?:on|at|in|by)$", "", activity)
    when = calendar_case(date.group(0)) if date else None
    value = when or activity
    key = f"{p}.plan.{slug(' '.join(activity.split()[:5]))}"
    text = f"{who} plans to {activity}" + (f" ({when})." if when else ".")
    return Fact("FACT", "plans", key, value, text, 0.7, 0.7 if date else 0.6)


# "I went to a few days of …": a stretch of time is not where one went.
_SPAN_START = re.compile(
    r"^(?:a few|a couple of|several|some|\d+|one|two|three|four|five) (?:days?|weeks?|months?|years?|hours?|times?)\b",
    re.IGNORECASE,
)


def _experience(m: re.Match[str], p: str, who: str) -> Fact | None:
    val = clip(m["val"], 8)
    if not val or _SPAN_START.match(val):
        return None
    if m["verb"].lower() == "went to" and not (_timed(m) or any(w[0].isupper() for w in val.split())):
        return None  # "went to the store / to see a movie": an outing, unless it has a time or a name
    return Fact("EXPERIENCE", "experiences", None, None, f"{who} {m['verb'].lower()} {val}.", 0.7, 0.5)


def _method(m: re.Match[str], p: str, who: str) -> Fact | None:
    goal, steps = m["goal"].strip(), m["val"].strip()
    if goal.lower().startswith("be "):
        return None  # "To be honest, ..." is a figure of speech, not a method
    return Fact("METHOD", goal[:80], None, None, f"To {goal}, {steps}.", 0.6, 0.5)


# What follows "always"/"never" in chat idioms, not an imperative: "Never mind", "Always happy to help".
_NOT_IMPERATIVE = frozenset(
    "mind again ever once before been was were had did thought knew seen heard said got gotten done felt made "
    "happy glad fun good nice great sure the a an so too really gonna".split()
)


def _principle(m: re.Match[str], p: str, who: str) -> Fact | None:
    words = m["val"].lower().split()
    verb = words[0].strip(",")
    # An elliptical first person ("Never thought …", "Always wanted …", "Always works") is no rule either.
    if len(words) < 2 or verb in _NOT_IMPERATIVE or verb.endswith("ed") or re.search(r"[^su]s$", verb):
        return None
    word = m["word"].capitalize()
    return Fact("PRINCIPLE", "guidelines", None, None, f"{word} {m['val'].strip()}.", 0.7, 0.65)


def _concept(m: re.Match[str], p: str, who: str) -> Fact | None:
    term = m["term"].strip()
    if term.split()[0].lower() in _NOT_TERMS:
        return None
    return Fact("CONCEPT", term[:80], None, None, f"{term} {m['verb']} {m['art']} {m['val'].strip()}.", 0.5, 0.4)


_CI = re.IGNORECASE | re.MULTILINE
_CS = re.MULTILINE  # case-sensitive: a name must be capitalised ("my dog is tired" names nobody)
_RELATIONS = (
    "wife|husband|partner|son|daughter|mother|mom|mum|father|dad|brother|sister|boss|manager|dog|cat"
    "|best friend|friend|girlfriend|boyfriend|dentist|doctor|landlord|landlady|roommate|flatmate|therapist|coach"
    "|piano teacher|guitar teacher|teacher|tutor|mentor|neighbou?r"
)
# Capitalised words that follow "my boss" without naming anyone ("my boss I think ...").
_NOT_NAMES = frozenset(["I", "I'm", "I've", "I'd", "I'll", "The", "This", "That", "It", "He", "She", "They"])
# A favourite thing: one to three words, not running into "these days" / "now" / "from now on".
_THING = r"(?P<thing>[a-z]+(?: (?!(?:these|now|nowadays|lately|from|at|anymore|again|is|was)\b)[a-z]+){0,2})"
_FAV = r"(?:favou?rite|fave|go-to)"
_FAV_THING = _FAV + " " + _THING
# Capitalised names and dates: "Name" / "June 5" (case-sensitive segment).
_NAME = r"(?P<val>(?!I'|I\b)[A-Z][\w'-]+(?: [A-Z][\w'-]+)?)"
_EVENT = r"(?P<thing>[a-z][a-z']*(?: [a-z][a-z']*){0,3})"


@dataclass(frozen=True, slots=True)
class Rule:
    """A pattern and its builder. The rule runs only when one of its lowercase ``needles`` occurs in
    the text: most messages match no rule, and a substring test is far cheaper than a regex scan."""

    user_only: bool
    needles: tuple[str, ...]
    pattern: re.Pattern[str]
    build: Builder


def _rule(needles: tuple[str, ...], regex: str, build: Builder, flags: int = _CI, *, user_only: bool = True) -> Rule:
    return Rule(user_only, needles, re.compile(regex, flags), build)


# Statements of one attribute of the speaker: (subject key, topic, template, max words, importance).
_LIVES_IN = _subject("home_city", "location", "{who} lives in {val}.", 6, 0.7)
_LIVES_IN_PLACE = _subject("home_city", "location", "{who} lives in {val}.", 4, 0.7)
_IS_FROM = _subject("hometown", "location", "{who} is from {val}.", 4, 0.6)
_WORKS_AT = _subject("employer", "work", "{who} works at {val}.", 5, 0.65)
_WORKS_AS = _subject("occupation", "work", "{who} works as {val}.", 5, 0.65)
_DIET_IS = _subject("diet", "health", "{who} is {val}.", 2, 0.7)
_IS_NAMED = _subject("name", "identity", "{who}'s name is {val}.", 3, 0.8)

_RULES: tuple[Rule, ...] = (
    _rule(
        ("fav", "go-to"),
        r"\bmy (?:new |current )?" + _FAV + r" (?P<thing>[a-z]+(?: [a-z]+){0,2}) "
        r"(?:is|are)(?: now)? " + _VAL,
        _favorite,
    ),
    # Updates: "I've switched my go-to X to V", "I changed my favorite X to V".
    _rule(
        ("switch", "chang"),
        r"\bI(?:'ve| have)?(?: \w+ly)? (?:switched|changed) my " + _FAV_THING + r" (?:over )?to " + _VAL,
        _favorite,
    ),
    # Value first: "V is my favorite X these days", "V is now my go-to X".
    _rule(
        ("fav", "go-to"),
        r"(?:^|(?<=[.!?:;,] )|(?<=^[a-z]))(?P<val>[\w'-]+(?: [\w'-]+){0,3}) "
        r"(?:is|are) (?:now |still )?my (?:new )?" + _FAV_THING + r"\b",
        _favorite,
    ),
    # "I've gotten really into V lately; it's easily my go-to X now".
    _rule(
        ("into",),
        r"\bI(?:'ve| have)? (?:gotten|got|been) (?:\w+ )?into (?P<val>[\w'-]+(?: [\w'-]+){0,3}?)"
        r"(?: (?:lately|recently|these days))?[;,] (?:it's|it is|that's|that is) (?:\w+ )?my " + _FAV_THING + r"\b",
        _favorite,
    ),
    _rule(
        ("pick",),
        r"\bif I (?:had|have) to (?:pick|choose) (?:just |only )?one " + _THING + r", "
        r"(?:it would be|it'd be|I'd pick|I would pick|I'd go with) " + _VAL,
        _favorite,
    ),
    _rule(
        ("i ",),
        r"\bI (?:(?:really|absolutely|truly|just|do) )?(?P<verb>like|love|enjoy|adore|prefer|hate"
        r"|dislike|detest|can't stand|cannot stand|don't like|do not like) " + _VAL,
        _opinion,
    ),
    _rule(
        ("live", "living", "moved", "relocated"),
        r"\bI(?:'m| am|'ve| have)?(?: just| now| currently| recently| finally| actually| officially| been)*"
        r" (?:live|living|moved|relocated) (?:in|to) " + _VAL,
        _LIVES_IN,
    ),
    _rule(
        ("life here", "living here", "renting", "my home in"),
        r"\b(?i:(?:life|living) here in|(?:I(?:'m| am|'ve| have)? )?(?:been )?renting (?:a|an|my) (?:\w+ )?"
        r"(?:flat|apartment|place|room|house|studio) in|my home in) (?P<val>[A-Z][\w'-]*(?: [A-Z][\w'-]*){0,2})",
        _LIVES_IN_PLACE,
        _CS,
    ),
    _rule(("grew up", "raised"), r"\bI (?:grew up|was (?:born and )?raised) in " + _VAL, _IS_FROM),
    _rule(
        ("grew up", "raised"),
        r"\b(?i:in) (?P<val>[A-Z][\w'-]*(?: [A-Z][\w'-]*){0,2}), where (?i:I) "
        r"(?i:grew up|was (?:born and )?raised)\b",
        _IS_FROM,
        _CS,
    ),
    _rule(("from",), r"\bI(?:'m| am) (?:originally )?from " + _VAL, _IS_FROM),
    _rule(("work at", "work for"), r"\bI (?:now |currently )?work (?:at|for) " + _VAL, _WORKS_AT),
    _rule(("employer", "company"), r"\bmy (?:(?:new |current )?employer|new company) is " + _VAL, _WORKS_AT),
    _rule(
        ("job at", "started at", "started working", "joined"),
        r"\b(?:(?i:my) (?:(?i:new|current) )?(?i:job (?:is )?at)|(?:(?i:I)(?:'ve| have)?|and) "
        r"(?:(?i:just|recently|now) )?(?i:started(?: working)? (?:at|for)|joined)) "
        r"(?P<val>[A-Z][\w&'-]*(?: [A-Z][\w&'-]*){0,4})",
        _WORKS_AT,
        _CS,
    ),
    _rule(("work as",), r"\bI (?:now |currently )?work as " + _VAL, _WORKS_AS),
    _rule(("allergic",), r"\bI(?:'m| am) allergic to " + _VAL, _allergy),
    _rule(
        ("vegetarian", "vegan", "pescatarian", "intolerant"),
        r"\bI(?:'m| am) (?:an? )?(?P<val>vegetarian|vegan|pescatarian|lactose intolerant|gluten intolerant)\b",
        _DIET_IS,
    ),
    _rule(
        ("going to", "gonna", "planning"),
        r"\bI(?:'m| am) (?P<frame>going to|gonna|planning to|planning on) (?P<val>[^.;!?\n]{3,120})",
        _plan,
    ),
    _rule(
        ("i'll", "i will", "i plan", "i intend"),
        r"\bI(?P<frame>'ll| will| plan to| intend to) (?P<val>[^.;!?\n]{3,120})",
        _plan,
    ),
    _rule(
        ("visited", "went to", "travel", "finished", "completed", "graduated"),
        r"\bI (?:just |recently )?(?P<verb>visited|went to|travell?ed to|finished|completed|graduated from) " + _VAL,
        _experience,
    ),
    _rule(("always", "never"), _START + r"(?:please )?(?P<word>always|never) (?P<val>[^.!?\n]{3,120})", _principle),
    _rule(
        ("name is", "call me", "called"),
        r"\b(?i:my name is|call me|I'm called|I am called) (?P<val>[A-Z][\w'-]+(?: [A-Z][\w'-]+)?)",
        _IS_NAMED,
        _CS,
    ),
    _rule(
        ("my ",),
        rf"\b(?i:my) (?:(?i:new) )?(?P<rel>(?i:{_RELATIONS}))(?:'s name)?(?: (?i:is))? "
        r"(?:(?i:called|named) )?" + _NAME,
        _relation,
        _CS,
    ),
    # "Name is my boss (now)", "I have a new dentist now, Name".
    _rule(
        ("my ",), _NAME + rf" (?i:is) (?:(?i:now) )?(?i:my) (?:(?i:new) )?(?P<rel>(?i:{_RELATIONS}))\b", _relation, _CS
    ),
    # Apposition: "dinner with Name tonight, my boss".
    _rule(
        ("my ",),
        r"\b(?i:with) " + _NAME + r"(?: (?i:today|tonight|tomorrow|yesterday|later|again))?, "
        rf"(?i:my) (?P<rel>(?i:{_RELATIONS}))\b",
        _relation,
        _CS,
    ),
    _rule(
        ("new ",),
        rf"\b(?i:I)(?:'ve| have)? (?i:got|have) (?i:a) (?i:new) (?P<rel>(?i:{_RELATIONS}))"
        r"(?: (?i:now))?, " + _NAME,
        _relation,
        _CS,
    ),
    # Dated events and their rescheduling: "my X is on June 5", "the X was rescheduled to June 9".
    _rule(
        ("my ", "the ", "our "),
        r"\b(?:my|the|our) " + _EVENT + r" (?:is|was|got|has been)"
        r"(?: (?:now|happening|scheduled|rescheduled|moved|postponed|pushed back|pushed|changed|planned|set))*"
        r"(?:, it(?:'s| is) now)? (?:on|to|for) (?P<date>" + DATE_PATTERN + ")",
        _event_date,
    ),
    _rule(
        ("schedul",),
        r"\b(?:re)?scheduled (?:my|the|our) " + _EVENT + r" (?:for|on|to) (?P<date>" + DATE_PATTERN + ")",
        _event_date,
    ),
    _rule(
        ("to ",),
        _START + r"(?i:to|in order to) (?P<goal>[^,.\n]{3,60}), (?P<val>[^.\n]{5,240})",
        _method,
        _CS,
        user_only=False,
    ),
    _rule(
        (" is a", " are a", " means a", " refers to a"),
        _START + r"(?P<term>[A-Z][\w+#-]*(?: [\w+#-]+){0,2}) (?P<verb>is|are|means|refers to) (?P<art>an?) "
        r"(?P<val>[^.!?\n]{8,200})",
        _concept,
        _CS,
        user_only=False,
    ),
)
_ANYONE_RULES = tuple(rule for rule in _RULES if not rule.user_only)


def subject_prefix(author: str | None) -> str:
    """``user`` for the (single) user; ``user.<author>`` when messages name who said them."""
    name = slug(author or "")
    return "user" if name in ("", "user", "human", "me") else f"user.{name}"


_MY = re.compile(r"\b(?:(my)|(mine))\b", re.IGNORECASE)
_LISTENER = re.compile(r"\byou(?:r|rs|rself)?\b", re.IGNORECASE)
_ME = re.compile(r"\b(?:me|myself)\b", re.IGNORECASE)


def in_third_person(content: str, who: str) -> str:
    """A statement about ``who`` with the speaker's own "my"/"me" resolved ("the user" for the unnamed
    user). A possessive that points back at the sentence's subject becomes "their" ("Maya plans to sell
    my drawings" reads "Maya plans to sell their drawings", not "… sell Maya's drawings"); otherwise,
    and for "me", the name: "Maya's sister says my plan works" reads "… Maya's plan works"."""
    subject, sep, rest = content.partition(" ")
    name = "the user" if who == "User" else who
    if subject == who:
        rest = _MY.sub(lambda m: "their" if m.group(1) else "theirs", rest)
    rest = _ME.sub(name, _MY.sub(lambda m: f"{name}'s", rest))
    return subject + sep + rest


def _precise(fact: Fact, who: str, match: re.Match[str]) -> Fact | None:
    """A statement about a person only as a complete clause (:mod:`.wellformed`), first person resolved;
    None for a fragment, a vague frame or a second person nobody can resolve."""
    if fact.type not in ("FACT", "EXPERIENCE"):
        return fact
    if _LISTENER.search(match.group(0).split(",", 1)[0]):
        return None  # "I love hanging out with you": about the listener, whom the clipped value would drop
    content = in_third_person(fact.content, who)
    if malformation(content) is not None:
        return None
    return fact if content == fact.content else replace(fact, content=content)


def extract_facts(text: str, *, from_user: bool, author: str | None) -> Iterator[Fact]:
    """Every statement the rules recognise in one message, in rule order then text order; statements
    about the speaker only when complete (:func:`_precise`)."""
    who = author if author and subject_prefix(author) != "user" else "User"
    prefix = subject_prefix(author)
    low = text.lower()
    rules = _RULES if from_user else _ANYONE_RULES
    for rule in rules:
        if not any(needle in low for needle in rule.needles):
            continue
        for match in rule.pattern.finditer(text):
            fact = rule.build(match, prefix, who)
            if fact is not None and (fact := _precise(fact, who, match)) is not None:
                yield fact
