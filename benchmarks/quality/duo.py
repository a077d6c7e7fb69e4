"""Two-person chats: the shape where small talk outranks the answer.

Two named people (one recorded as ``user``, the other as ``assistant``, each turn carrying its
speaker's name as ``author``) talk over many sessions. Both names occur in most turns (greetings,
thanks, "haha {name}"), each fact is wrapped in small talk before and after, some facts are told
with relative time ("last week", "two days ago", "next month"), and every question names a
participant plus one rare content word ("What problem did Jonas have?"). Seeded and
deterministic like :mod:`.generator`; every planted value occurs in its evidence turn only.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from benchmarks.quality.dataset import Conversation, Dataset, Question, Session, Turn
from benchmarks.quality.generator import check

BASE_TIME = datetime(2025, 3, 3, 18, 0, tzinfo=UTC)
NAMED, RELATIVE = "named", "relative"
PAIRS = (
    ("Maya", "Jonas"),
    ("Lena", "Tomas"),
    ("Priya", "Oskar"),
    ("Clara", "Mateo"),
    ("Nora", "Felix"),
    ("Ines", "Rafael"),
    ("Hanna", "Leon"),
    ("Zoe", "Emil"),
)
# Small talk: ``{me}`` the speaker, ``{you}`` the other. No line holds a planted value or a question word.
OPENINGS = (
    "Hey {you}! How are you doing?",
    "Hi {you}, good to hear from you!",
    "Hello {you}! Long time no talk, how's everything?",
    "Hey {you}, hope your week is going well!",
)
OPENING_REPLIES = (
    "Hi {you}! I'm good, thanks for asking. How about you?",
    "Hey {you}! All good here, thanks. And you?",
    "Hi {you}, so nice to hear from you! Doing fine, you?",
)
SMALL_TALK = (
    "Haha {you}, that's so true!",
    "Oh wow, {you}, that's awesome!",
    "Thanks so much, {you}!",
    "That sounds great, {you}.",
    "Happy for you, {you}.",
    "haha yes",
    "Totally, {you}!",
    "I know right, {you}!",
    "Aww, that's sweet of you, {you}.",
    "Good for you, {you}!",
    "lol same here, {you}",
    "So glad to hear that, {you}!",
    "Keep me posted, {you}!",
    "You're the best, {you}!",
    "No problem at all, {you}!",
)
CHATTER = (
    "The weather has been so grey lately, {you}, I miss the sun.",
    "I watched a funny movie with friends on Saturday, {you}.",
    "My coffee machine broke again this morning, {you}, typical.",
    "Work has been busy but fine, {you}, nothing special.",
    "I tried a new pasta recipe, {you}, turned out okay.",
    "The neighbours are renovating again, {you}, so noisy!",
    "I finally cleaned my apartment, {you}, feels good.",
    "I had the weirdest dream last night, {you}, haha.",
    "The race on TV yesterday was so boring, {you}.",
    "My fear of missing out is real, {you}, haha.",
    "Have you ever been to a workshop like that, {you}?",
    # Loose talk that pattern rules cut into fragments ("… likes how some of the.", "… plans to a festival").
    "I love how some of the colours came out in my last sketch, {you}.",
    "I like it, {you}, it's cozy.",
    "I'm going to be fine, {you}, don't worry.",
    "I'll keep you updated, {you}!",
    "I'm planning to sell my drawings at the market, {you}.",
    "I'm going to a festival with friends soon, {you}!",
    "I like that the shelter needs my help on weekends, {you}.",
    "I'm going to keep going, {you}, one step at a time.",
    "I went to a few days of silent retreat once, {you}, never again.",
)
CLOSINGS = (
    "Thanks so much, {you}! Talk soon, bye!",
    "Bye {you}, take care!",
    "Great chatting, {you}! See you later!",
    "Okay {you}, I have to run. Talk soon!",
)


@dataclass(frozen=True)
class Template:
    """A fact told in one turn (``{val}`` the value, ``{you}`` the other) and the question about it
    (``{who}`` the teller). The question shares one rare content word with the statement."""

    kind: str
    statement: str
    question: str
    pool: tuple[str, ...]


TEMPLATES = (
    Template(
        NAMED,
        "{you}, lately I had a problem: I hurt my {val} and had to stop climbing for a while.",
        "What problem did {who} have?",
        ("wrist", "ankle", "shoulder", "elbow", "knee"),
    ),
    Template(
        NAMED,
        "Guess what, {you}, I started a painting course, and my teacher is called {val}.",
        "What is the name of {who}'s painting teacher?",
        ("Ulrike", "Margot", "Henrietta", "Gisela", "Beatrix"),
    ),
    Template(
        NAMED,
        "Oh {you}, my dream is to open a small {val} shop one day.",
        "What is {who}'s dream?",
        ("bicycle", "bookbinding", "ceramics", "cheese", "vinyl"),
    ),
    Template(
        NAMED,
        "By the way {you}, I volunteer at the animal shelter in {val} every Sunday.",
        "Where does {who} volunteer?",
        ("Westhaven", "Elmsbridge", "Northfield", "Brookmoor", "Ashcombe"),
    ),
    Template(
        NAMED,
        "Honestly {you}, my biggest fear is {val}, always has been.",
        "What is {who}'s biggest fear?",
        ("spiders", "thunderstorms", "elevators", "deep water", "heights"),
    ),
    Template(
        RELATIVE,
        "Last week I went to a {val} workshop with my cousin, {you}!",
        "When did {who} go to the {val} workshop?",
        ("pottery", "woodcarving", "calligraphy", "glassblowing", "origami"),
    ),
    Template(
        RELATIVE,
        "Yesterday I adopted a kitten, {you}, we named her {val}.",
        "When did {who} adopt the kitten?",
        ("Pixel", "Mochi", "Saffron", "Tofu", "Juniper"),
    ),
    Template(
        RELATIVE,
        "Two days ago I ran my first {val} race, {you}, so proud!",
        "When did {who} run the race?",
        ("marathon", "triathlon", "relay", "trail", "obstacle"),
    ),
    Template(
        RELATIVE,
        "Next month I'm flying to {val} for a conference, {you}.",
        "Where is {who} flying for the conference?",
        ("Lisbon", "Montreal", "Tallinn", "Osaka", "Valparaiso"),
    ),
)
# A relative-time question is answered by the value; the date lies in the evidence's time.


@dataclass(frozen=True)
class DuoConfig:
    """Shape of a two-person dataset."""

    seed: int = 11
    conversations: int = 3
    sessions: int = 30
    turns_per_session: int = 20
    facts_per_person: int = 4


def _line(rng: random.Random, pool: tuple[str, ...], me: str, you: str) -> str:
    return rng.choice(pool).format(me=me, you=you)


def _session(
    rng: random.Random, cfg: DuoConfig, sid: str, start: datetime, names: tuple[str, str], facts: list
) -> tuple[Session, dict[int, str]]:
    """One sitting: greetings, chatter and small talk, each fact wrapped in small talk, a farewell."""
    a, b = names
    lines: list[tuple[int, str, int | None]] = [(0, _line(rng, OPENINGS, a, b), None)]
    lines.append((1, _line(rng, OPENING_REPLIES, b, a), None))
    body: list[list[tuple[int, str, int | None]]] = []
    for index, (who, text) in facts:
        other = 1 - who
        you = names[other]
        body.append(
            [
                (who, _line(rng, SMALL_TALK, names[who], you), None),
                (who, text, index),
                (other, _line(rng, SMALL_TALK, you, names[who]), None),
                (other, _line(rng, SMALL_TALK, you, names[who]), None),
            ]
        )
    while sum(map(len, body)) + 4 < cfg.turns_per_session:
        who = rng.randrange(2)
        body.append(
            [
                (who, _line(rng, CHATTER, names[who], names[1 - who]), None),
                (1 - who, _line(rng, SMALL_TALK, names[1 - who], names[who]), None),
            ]
        )
    rng.shuffle(body)
    lines += [line for block in body for line in block]
    lines.append((0, _line(rng, CLOSINGS, a, b), None))
    lines.append((1, _line(rng, CLOSINGS, b, a), None))
    turns, where, t = [], {}, start
    for n, (who, text, index) in enumerate(lines):
        t += timedelta(seconds=rng.randint(20, 120))
        event_id = f"{sid}-t{n:02d}"
        if index is not None:
            where[index] = event_id
        turns.append(Turn(event_id, "user" if who == 0 else "assistant", text, t.isoformat(), names[who]))
    return Session(sid, turns), where


def generate_duo(cfg: DuoConfig | None = None) -> Dataset:
    """Two-person conversations and their questions, checked like the generator's (``generator.check``)."""
    cfg = cfg or DuoConfig()
    conversations, questions = [], []
    for c in range(cfg.conversations):
        rng = random.Random(f"duo/{cfg.seed}/{c}")
        names = PAIRS[c % len(PAIRS)]
        conv_id = f"d{c:03d}"
        planned: list[tuple[int, int, Template, str, int]] = []  # (fact index, teller, template, value, session)
        for who in (0, 1):
            for template in rng.sample(TEMPLATES, cfg.facts_per_person):
                taken = {p[3] for p in planned if p[2] is template}
                value = rng.choice([v for v in template.pool if v not in taken])
                planned.append((len(planned), who, template, value, rng.randrange(cfg.sessions)))
        sessions, evidence, start = [], {}, BASE_TIME + timedelta(days=7 * c)
        for s in range(cfg.sessions):
            here = [
                (index, (who, t.statement.format(val=value, you=names[1 - who])))
                for index, who, t, value, session in planned
                if session == s
            ]
            session, where = _session(rng, cfg, f"{conv_id}-s{s:02d}", start, names, here)
            sessions.append(session)
            evidence.update(where)
            start += timedelta(days=rng.randint(2, 6), hours=rng.randint(-3, 3))
        conversations.append(Conversation(conv_id, sessions))
        for index, who, t, value, _ in planned:
            questions.append(
                Question(
                    f"{conv_id}-q{index:02d}",
                    conv_id,
                    t.kind,
                    t.question.format(who=names[who], val=value),
                    [evidence[index]],
                    value,
                )
            )
    ds = Dataset(conversations, questions)
    check(ds)
    return ds
