"""Whether a knowledge line reads as a complete statement: the offline engine's precision gate.

Pattern rules cut values out of chat turns; cut in the wrong place they leave fragments ("X likes
how some of the."), frames without a verb ("X plans to a festival") or nothing worth knowing ("X
likes it."). A line passes when its object (what follows the verb frame) is a whole phrase: no
dangling function word, no pronoun for the whole object, no first or second person, no bare time
span where a place or thing belongs, no stock vague object. Pure.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[A-Za-z0-9][\w'-]*")
# Words a complete phrase does not end with: articles, prepositions, conjunctions, possessives,
# auxiliaries and pronoun-like determiners ("… of the.", "… that needs my.").
DANGLING = frozenset(
    """
    a an the some any my your our their his her its this that these those of to in on at for with by from
    about into onto over under and or but so if than then as because when while where which who whom whose
    how what is are was were be been being am do does did has have had will would can could should might
    must shall just really very more most much many few lot lots such every each no not also even
    i you we they he she it me us them going gonna need needs want wants like likes
    """.split()
)
PERSONAL = frozenset("i me my mine myself you your yours yourself we us our ours ourselves i'm i've i'd i'll".split())
# Objects that say nothing on their own (the whole object, after the frame).
VAGUE_OBJECTS = frozenset(
    "it that this them those these him her one ones something anything everything nothing stuff things thing "
    "some more much lots".split()
) | {"a lot", "that one", "this one", "the same", "so much", "very much", "all of it", "it all", "all that"}
# Verb frames whose object has to be a verb phrase, and what alone is too vague to keep.
_PLAN_FRAME = re.compile(r"\bplans to (?P<obj>.+)$", re.IGNORECASE)
VAGUE_PLANS = tuple(
    "be |keep |try |see |let |do it|do that|do this|go now|get going|think about|check |look into|figure |"
    "have to|need to|make it|get back|talk |tell |send you|call you|text you|miss |say |have a look|take a look".split(
        "|"
    )
)
NOT_VERB_STARTS = frozenset("a an the some my your our this that these those to in on at for with by from of".split())
_SPAN = re.compile(
    r"^(?:a |an |the |some |few |a few |several |two |three |\d+ )*(?:days?|weeks?|months?|years?|hours?|minutes?"
    r"|while|bit|couple of \w+)$",
    re.IGNORECASE,
)
# The statement frames the offline engine writes: subject, verb frame, object.
_FRAME = re.compile(
    r"^(?P<subject>.+?) (?:likes|dislikes|prefers|plans to|lives in|is from|works at|works as|is allergic to|is"
    r"|visited|went to|travelled to|traveled to|finished|completed|graduated from|'s [\w ]+? is(?: named| on)?)"
    r" (?P<obj>.+?)(?: \([^)]*\))?\.?$",
    re.IGNORECASE,
)


def _object(line: str) -> str | None:
    match = _FRAME.match(line.strip())
    return match["obj"].strip() if match else None


def malformation(line: str) -> str | None:
    """Why ``line`` is not a complete, contentful statement, or None when it is.

    Reasons: ``empty``, ``no frame`` (no subject–verb–object shape), ``dangling`` (ends with a
    function word), ``person`` (first or second person left in), ``vague`` (a pronoun or stock
    phrase as the whole object), ``verbless plan`` ("plans to a festival"), ``time span`` ("went to
    a few days").
    """
    text = line.strip()
    if not text:
        return "empty"
    obj = _object(text)
    if obj is None:
        return "no frame"
    words = [w.lower() for w in _WORD.findall(obj)]
    if not words:
        return "empty"
    if words[-1] in DANGLING:
        return "dangling"
    if any(w in PERSONAL for w in words):
        return "person"
    lowered = " ".join(words)
    if lowered in VAGUE_OBJECTS:
        return "vague"
    if _SPAN.match(lowered):
        return "time span"
    plan = _PLAN_FRAME.search(text)
    if plan is not None:
        first = plan["obj"].split()[0].lower()
        if first in NOT_VERB_STARTS:
            return "verbless plan"
        if any((plan["obj"].lower() + " ").startswith(v) for v in VAGUE_PLANS) and len(words) <= 4:
            return "vague"
    return None
