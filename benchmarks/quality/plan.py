"""Which facts a generated conversation plants, in which words, in which sessions, and the question
each one answers.

Question kinds:

- ``literal``: a slot's plain statement and a question that reuses its words ("my favorite drink is
  X" / "What is the user's favorite drink?");
- ``paraphrase``: a statement from ``paraphrases.PARAPHRASES`` and a question sharing no content
  word with it (checked here, again after noise, and by ``generator.check``);
- ``updated``: a fact stated, then changed in a later session; the evidence is the newest
  statement, the superseded value goes to ``stale_values``;
- ``spread``: a fact told over two or more user turns (``spreads.SPREADS``), every part evidence,
  the parts in one session or in later ones.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from benchmarks.quality import catalog, spreads
from benchmarks.quality.catalog import SLOTS, Slot
from benchmarks.quality.paraphrases import PARAPHRASES
from benchmarks.quality.words import shared_content_words

if TYPE_CHECKING:
    from benchmarks.quality.generator import GeneratorConfig

POOLS: dict[str, tuple[str, ...]] = {**catalog.POOLS, **spreads.POOLS}
LITERAL, PARAPHRASE, SPREAD, UPDATED = "literal", "paraphrase", "spread", "updated"


@dataclass
class Plant:
    """A user turn scheduled into a session: a fact's statement (``value`` set) or an echo ("")."""

    fact: int  # index of its fact; echoes get their own negative index so each is a thread of its own
    session: int
    rank: int  # order among its fact's plants: the original 0, its update 1; spread part k is k
    text: str
    ack: str  # catalog.ACKS key for the assistant's reply in tidy sessions, or "echo"
    value: str = ""
    avoid: str = ""  # a paraphrase question this turn must share no content word with, even after noise
    event_id: str = ""


@dataclass
class Fact:
    """One question's fact: its kind, wording, evidence plants and answer."""

    kind: str
    question: str
    evidence: list[Plant]
    answer: str
    stale: list[str] = field(default_factory=list)


class _Planner:
    def __init__(self, rng: random.Random, cfg: GeneratorConfig) -> None:
        self.rng, self.cfg = rng, cfg
        self.used: set[str] = set()
        self.last_first = max(0, min(cfg.sessions - 2, int(0.6 * cfg.sessions)))
        self.plants: list[Plant] = []
        self.facts: list[Fact] = []

    def value(self, pool: str) -> str:
        value = self.rng.choice([v for v in POOLS[pool] if v not in self.used])
        self.used.add(value)
        return value

    def plant(self, session: int, rank: int, text: str, ack: str, value: str = "", avoid: str = "") -> Plant:
        p = Plant(len(self.facts), session, rank, text, ack, value, avoid)
        self.plants.append(p)
        return p

    def echoes(self, texts: tuple[str, ...]) -> None:
        for _ in range(self.rng.randint(max(0, self.cfg.echoes - 1), self.cfg.echoes + 1)):
            echo = Plant(
                -1 - len(self.plants), self.rng.randrange(self.cfg.sessions), 0, self.rng.choice(texts), "echo"
            )
            self.plants.append(echo)

    def slot_fact(self, slot: Slot, kind: str) -> None:
        rng, value = self.rng, self.value(slot.pool)
        session = rng.randint(0, self.last_first)
        if kind == PARAPHRASE:
            statements, questions = PARAPHRASES[slot.x]
            text, question = rng.choice(statements).format(val=value), rng.choice(questions)
            if shared_content_words(question, text):
                raise ValueError(f"paraphrase catalogue: {question!r} shares words with {text!r}")
            fact = Fact(kind, question, [self.plant(session, 0, text, slot.kind, value, question)], value)
        else:
            first = self.plant(session, 0, rng.choice(slot.statements).format(val=value), slot.kind, value)
            fact = Fact(kind, rng.choice(slot.questions), [first], value)
        if kind == UPDATED:
            new = self.value(slot.pool)
            later = self.plant(
                rng.randint(session + 1, self.cfg.sessions - 1),
                1,
                rng.choice(slot.updates).format(val=new),
                "update",
                new,
            )
            fact = Fact(kind, rng.choice(slot.updated_questions), [later], new, [value])
        self.facts.append(fact)

    def spread_fact(self, spread: spreads.Spread) -> None:
        rng, parts = self.rng, []
        session = rng.randint(0, self.last_first)
        for rank, (pool, phrasings) in enumerate(zip(spread.pools, spread.parts, strict=True)):
            if rank and rng.random() >= 0.5 and session < self.cfg.sessions - 1:
                session = rng.randint(session + 1, min(self.cfg.sessions - 1, session + 3))
            value = self.value(pool)
            parts.append(self.plant(session, rank, rng.choice(phrasings).format(val=value), SPREAD, value))
        self.facts.append(Fact(SPREAD, rng.choice(spread.questions), parts, parts[-1].value))


def plan(rng: random.Random, cfg: GeneratorConfig) -> tuple[list[Fact], list[Plant]]:
    """The conversation's facts (one question each) and every plant, echoes included."""
    p = _Planner(rng, cfg)
    slots = rng.sample(SLOTS, min(cfg.facts, len(SLOTS)))
    updatable = [s for s in slots if s.updatable]
    updated = {s.x for s in rng.sample(updatable, min(cfg.updates, len(updatable)))}
    rest = [s for s in slots if s.x not in updated]
    paraphrased = {s.x for s in rng.sample(rest, min(cfg.paraphrases, len(rest)))}
    for slot in slots:
        p.echoes(slot.echoes)
        p.slot_fact(slot, UPDATED if slot.x in updated else PARAPHRASE if slot.x in paraphrased else LITERAL)
    for spread in rng.sample(spreads.SPREADS, min(cfg.spreads, len(spreads.SPREADS))):
        if spread.echoes:
            p.echoes(spread.echoes)
        p.spread_fact(spread)
    return p.facts, p.plants
