"""Identity from observed style: how the anima itself writes, accumulated across runs.

Style counters are additive, so they are kept in ``identity.self['style_stats']`` and summed with
each run's new messages; the descriptive fields are derived from the totals. A new identity version
is proposed only when a description changes, or when one run observed at least as many messages as
all earlier versions together (so the counters stay representative without a version per run).
Counters of runs that change nothing are not kept: the style is the last version's plus this run's.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .text import is_agent_turn
from .types import EventInput, IdentityDraft, KnowledgeDraft

_EMOJI = re.compile("[\U0001f300-\U0001faff\u2600-\u27bf]")
_CONTRACTION = re.compile(r"\b\w+'(?:s|re|ll|ve|d|t|m)\b", re.IGNORECASE)
_FORMAL = re.compile(r"\b(?:please|kindly|regards|therefore|however|furthermore|certainly|sincerely|indeed)\b", re.I)
_CASUAL = re.compile(r"\b(?:hey|yeah|yep|cool|awesome|lol|gonna|wanna|btw|no worries|sure thing)\b", re.I)
_STRUCTURE = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)]|```)", re.M)
# A style or personality rests on at least this many of the anima's own messages; fewer describe
# nothing (two replies made an "Enthusiastic Responder").
MIN_STYLE_MESSAGES = 50
MIN_TOPIC_FACTS = 3  # a topic the conversations "often touch on" rests on at least this many facts
STAT_KEYS = ("messages", "words", "questions", "exclaims", "emoji", "formal", "casual", "contractions", "structured")


def observe(events: Iterable[EventInput]) -> Counter[str]:
    """Style counters over the anima's own messages among ``events``."""
    stats: Counter[str] = Counter()
    for event in events:
        # A named participant's message (an ``author``) is a person's voice in a chat between people,
        # not the anima's own: it describes no style of the anima.
        if not is_agent_turn(event) or not event.content or event.author:
            continue
        text = event.content.replace("\u2019", "'")
        stats["messages"] += 1
        stats["words"] += len(text.split())
        stats["questions"] += "?" in text
        stats["exclaims"] += "!" in text
        stats["emoji"] += bool(_EMOJI.search(text))
        stats["formal"] += len(_FORMAL.findall(text))
        stats["casual"] += len(_CASUAL.findall(text))
        stats["contractions"] += len(_CONTRACTION.findall(text))
        stats["structured"] += bool(_STRUCTURE.search(text))
    return stats


def _traits(stats: Mapping[str, int]) -> list[str]:
    n = max(1, stats.get("messages", 0))
    avg_words = stats.get("words", 0) / n
    traits = ["concise" if avg_words < 25 else "balanced" if avg_words < 80 else "thorough"]
    tone = (stats.get("formal", 0) - stats.get("casual", 0) - 0.5 * stats.get("contractions", 0)) / n
    traits.append("formal" if tone > 0.2 else "casual" if tone < -0.5 else "neutral")
    if stats.get("questions", 0) / n >= 0.3:
        traits.append("asks questions often")
    if (stats.get("exclaims", 0) + stats.get("emoji", 0)) / n >= 0.3:
        traits.append("expressive")
    if stats.get("emoji", 0) / n >= 0.2:
        traits.append("uses emoji")
    if stats.get("structured", 0) / n >= 0.3:
        traits.append("structures answers as lists or code")
    return traits


def distinctive(traits: Sequence[str]) -> bool:
    """Whether observed traits differ from the neutral default: a tone other than neutral, or a habit
    (questions, exclamations, emoji, lists); message length alone describes nobody."""
    return len(traits) > 2 or (len(traits) == 2 and traits[1] != "neutral")


def _personality(traits: Sequence[str]) -> str | None:
    if "expressive" in traits:
        temper = "Enthusiastic"
    elif "asks questions often" in traits:
        temper = "Inquisitive"
    else:
        return None  # a "Steady Helper" says nothing a neutral default would not
    role = {"concise": "Responder", "balanced": "Helper", "thorough": "Explainer"}[traits[0]]
    return f"{temper} {role}"


_CLAUSES = {
    "asks questions often": "often ask questions",
    "expressive": "am expressive",
    "uses emoji": "use emoji",
    "structures answers as lists or code": "structure answers as lists or code",
}


def _prose(traits: Sequence[str], topics: Mapping[str, int]) -> str:
    length = {"concise": "short", "balanced": "medium-length", "thorough": "detailed"}[traits[0]]
    prose = f"I tend to write {length} messages in a {traits[1]} tone."
    clauses = [_CLAUSES[t] for t in traits[2:]]
    if clauses:
        prose += " I " + (", ".join(clauses[:-1]) + " and " if len(clauses) > 1 else "") + clauses[-1] + "."
    top = [t for t, n in sorted(topics.items(), key=lambda kv: (-kv[1], kv[0]))[:3] if n >= MIN_TOPIC_FACTS]
    if top:
        prose += " Our conversations often touch on " + ", ".join(top) + "."
    return prose


def evolve_identity(
    existing: IdentityDraft | None, events: Sequence[EventInput], knowledge: Sequence[KnowledgeDraft]
) -> IdentityDraft | None:
    """The next identity version, or ``None`` when nothing worth a new version was observed."""
    old_self: Mapping[str, Any] = existing.self if existing else {}
    old_stats = Counter({k: int(v) for k, v in dict(old_self.get("style_stats", {})).items() if k in STAT_KEYS})
    old_topics = Counter({str(k): int(v) for k, v in dict(old_self.get("topics", {})).items()})
    new_stats, new_topics = observe(events), Counter(k.topic for k in knowledge if k.type in ("FACT", "EXPERIENCE"))
    if not new_stats and not new_topics:
        return None
    stats, topics = old_stats + new_stats, old_topics + new_topics
    if not stats["messages"]:
        return None  # nothing the anima said yet: no style to describe
    traits = _traits(stats) if stats["messages"] >= MIN_STYLE_MESSAGES else []
    if not distinctive(traits):
        traits = []  # nothing that sets it apart from a neutral default: no style line at all
    style = ", ".join(traits) or None
    personality = _personality(traits) if traits else None
    prose = _prose(traits, topics) if traits else None
    reason = _reason(existing, old_stats, stats, personality, style, prose)
    if reason is None:
        return None
    new_self = {
        "self_reflection": prose,
        "traits": traits,
        "style_stats": {k: stats[k] for k in STAT_KEYS},
        "topics": dict(sorted(topics.items())),
    }
    return IdentityDraft(
        personality_type=personality, communication_style=style, self=new_self, prose=prose, reason=reason
    )


def _reason(
    existing: IdentityDraft | None,
    old_stats: Mapping[str, int],
    stats: Mapping[str, int],
    personality: str | None,
    style: str | None,
    prose: str | None,
) -> str | None:
    """Why a new version is warranted, or ``None`` when it is not."""
    if existing is None:
        return f"initial identity from {stats['messages']} observed messages"
    changes = [
        f"{name}: {old!r} -> {new!r}"
        for name, old, new in (
            ("personality_type", existing.personality_type, personality),
            ("communication_style", existing.communication_style, style),
            ("prose", existing.prose, prose),
        )
        if old != new
    ]
    if changes:
        return "observed style changed; " + "; ".join(changes)
    at_version = old_stats.get("messages", 0)
    if stats["messages"] >= 2 * max(1, at_version):
        return f"refreshed style statistics ({at_version} -> {stats['messages']} observed messages)"
    return None
