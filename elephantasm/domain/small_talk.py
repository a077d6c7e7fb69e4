"""Content-free conversational moves: greetings, thanks, farewells, laughter, "keep me posted".

Such a turn carries no fact, yet often names the other person ("Thanks so much, Maya!"), so a query
naming that person would match it better than the turn that answers. Names addressed to someone
count as generic words. Pure.
"""

from __future__ import annotations

import re
from functools import lru_cache

_SENTENCE = re.compile(r"(?<=[.!?…])\s+|\n+")
# A capitalised word addressed to someone: after a greeting or a comma (or at the very start),
# before punctuation or the end ("Hey Maya,", "thanks, Maya!", "Maya, haha").
_VOCATIVE = re.compile(
    r"(?:^|(?<=, )|(?<=\bhi )|(?<=\bhey )|(?<=\bhello )|(?<=\bbye )|(?<=\bthanks )|(?<=\byo )|(?<=\bdear )|(?<=\baww )|(?<=\boh )|(?<=\bhaha )|(?<=\blol )|(?<=\bok )|(?<=\bokay )|(?<=\bnight )|(?<=\bmorning )|(?<=thank you ))"
    r"(?-i:[A-Z][\w'-]+)(?=\s*(?:[,.!?…:;)]|$))",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z']+")
# Stock phrases whose words are not generic on their own ("I had a problem" is content).
_PHRASES = re.compile(r"\b(?:no (?:problem|worries)|of course|my pleasure|take care)\b", re.IGNORECASE)
_SMILEY = re.compile(r"[:;]-?[()DPp]|<3|[\U0001f300-\U0001faff\u2600-\u27bf]")
# Every word of a content-free sentence is one of these (a vocative name aside).
SMALL_TALK_WORDS = frozenset(
    """
    hi hey hello heya hiya yo howdy morning evening night afternoon good goodnight bye goodbye cya later soon
    see you talk take care cheers thanks thank thx ty much so very lot lots a at the for it that this is was
    haha hahaha hah ha hehe lol lmao rofl omg wow oh ooh aww aw ah yay yeah yes yep yup ya no nope nah ok okay
    okey kk sure cool nice great awesome amazing lovely sweet fantastic wonderful perfect glad happy
    congrats congratulations well done proud totally true exactly right agreed same here too know i i'm im
    i've you you're youre your we we're us our me my keep posted updated update let know hope doing
    how are what's whats up going all fine hear sounds sound thats that's what about and to of in with
    be been best really just again miss missed chat chatting catch catching nice meet meeting have had
    day week weekend fun enjoy enjoyed love loved welcome anytime np definitely
    absolutely indeed wish luck hugs xoxo xo take it easy run gotta got go must wait can't cant waiting
    ready for sharing share tell telling me us stay safe warm speak speaking soon catch up dear friend
    buddy mate pal man dude girl sis bro appreciate appreciated means everything hun mine sweet kind
    am asking ask how's hows long time there from things life has it's its where did do does
    i'll ill we'll don't dont worry
    """.split()
)
SMALL_TALK_MAX_WORDS = 14


@lru_cache(maxsize=16384)
def is_small_talk_sentence(sentence: str) -> bool:
    """Whether one sentence is only a greeting, thanks, farewell, laughter or stock reply.

    At most :data:`SMALL_TALK_MAX_WORDS` words, no digit, and every word (names addressed to
    someone aside) in :data:`SMALL_TALK_WORDS`. Empty text counts as content-free.
    """
    s = _SMILEY.sub(" ", sentence).strip()
    if not s:
        return True
    if any(ch.isdigit() for ch in s):
        return False
    s = _PHRASES.sub(" ", _VOCATIVE.sub(" ", s))
    words = _WORD.findall(s.lower())
    if len(words) > SMALL_TALK_MAX_WORDS:
        return False
    return all(w.strip("'") in SMALL_TALK_WORDS for w in words)


def is_small_talk(text: str) -> bool:
    """Whether a whole turn (or line) is content-free: every sentence of it is small talk."""
    return all(is_small_talk_sentence(s) for s in _SENTENCE.split(text.strip()) if s.strip())
