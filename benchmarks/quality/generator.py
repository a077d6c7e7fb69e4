"""A seeded, deterministic generator of long multi-session user/assistant conversations.

Each conversation plants facts (preferences, people, places, plans with dates) in the user's turns,
later updates some of them (a new city, a new boss, a rescheduled date), and surrounds them with
everyday chatter, some of it lexically close to the facts ("my boss keeps sending me videos").
Every fact yields one question annotated with the event that answers it; for an updated fact only
the newest statement is evidence and the superseded value is listed in ``stale_values``.

Same arguments → byte-identical dataset (``Dataset.dumps()``): randomness comes only from
``random.Random`` seeded per conversation, and timestamps from a fixed base date.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from benchmarks.quality.catalog import ACKS, CHATTER, ECHO_REPLIES, ELABORATIONS, FILL, POOLS, SLOTS, Slot
from benchmarks.quality.dataset import Conversation, Dataset, Question, Session, Turn, validate
from benchmarks.quality.metrics import mentions

BASE_TIME = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)
RELATIONS = tuple(s.x for s in SLOTS if s.kind == "person")


@dataclass(frozen=True)
class GeneratorConfig:
    """Shape of a generated dataset."""

    seed: int = 7
    conversations: int = 8
    sessions: int = 20
    turns_per_session: int = 20
    facts: int = 12
    updates: int = 4
    echoes: int = 4  # mean number of value-free mentions of each fact's subject (±1)


@dataclass
class _Plant:
    """A fact statement scheduled into a session."""

    slot: Slot
    value: str
    session: int
    text: str
    ack_kind: str
    event_id: str = ""


def _pick_value(rng: random.Random, pool: str, used: set[str]) -> str:
    value = rng.choice([v for v in POOLS[pool] if v not in used])
    used.add(value)
    return value


def _plan_facts(
    rng: random.Random, cfg: GeneratorConfig
) -> tuple[list[_Plant], list[tuple[_Plant, _Plant]], list[_Plant]]:
    """Choose slots and values; schedule originals early, updates strictly later, echoes anywhere."""
    slots = rng.sample(SLOTS, min(cfg.facts, len(SLOTS)))
    updatable = [s for s in slots if s.updatable]
    updated = set(id(s) for s in rng.sample(updatable, min(cfg.updates, len(updatable))))
    used: set[str] = set()
    last_original = max(0, min(cfg.sessions - 2, int(0.6 * cfg.sessions)))
    originals, updates, echoes = [], [], []
    for slot in slots:
        for _ in range(rng.randint(max(0, cfg.echoes - 1), cfg.echoes + 1)):
            echoes.append(_Plant(slot, "", rng.randrange(cfg.sessions), rng.choice(slot.echoes), "echo"))
        value = _pick_value(rng, slot.pool, used)
        orig = _Plant(slot, value, rng.randint(0, last_original),
                      rng.choice(slot.statements).format(val=value), slot.kind)
        originals.append(orig)
        if id(slot) in updated:
            new = _pick_value(rng, slot.pool, used)
            upd = _Plant(slot, new, rng.randint(orig.session + 1, cfg.sessions - 1),
                         rng.choice(slot.updates).format(val=new), "update")
            updates.append((orig, upd))
    return originals, updates, echoes


def _chatter(rng: random.Random, user: str, assistant: str) -> tuple[str, str]:
    fill = {k: rng.choice(v) for k, v in FILL.items()} | {"n": rng.randint(2, 9), "x": rng.choice(RELATIONS)}
    return user.format(**fill), assistant.format(**fill)


def _session(rng: random.Random, cfg: GeneratorConfig, conv: int, number: int, start: datetime,
             plants: list[_Plant]) -> Session:
    """One session: chatter pairs with this session's fact statements at random positions."""
    pairs = max(cfg.turns_per_session // 2 + rng.randint(-1, 1), len(plants), 1)
    slots_at = dict(zip(sorted(rng.sample(range(pairs), len(plants))), plants, strict=True))
    session_id = f"c{conv:03d}-s{number:02d}"
    turns: list[Turn] = []
    topics = rng.sample(CHATTER, len(CHATTER))  # no topic repeats within a session until all are used
    t = start
    for pair in range(pairs):
        if pair in slots_at:
            plant = slots_at[pair]
            user = plant.text
            assistant = rng.choice(ECHO_REPLIES if plant.ack_kind == "echo" else ACKS[plant.ack_kind])
            plant.event_id = f"{session_id}-t{len(turns):02d}"
        else:
            user, assistant = _chatter(rng, *topics[pair % len(topics)])
        assistant = " ".join([assistant, *rng.sample(ELABORATIONS, rng.randint(1, 2))])
        for role, text in (("user", user), ("assistant", assistant)):
            t += timedelta(seconds=rng.randint(30, 150))
            turns.append(Turn(f"{session_id}-t{len(turns):02d}", role, text, t.isoformat()))
    return Session(session_id, turns)


def _questions(
    rng: random.Random, conv_id: str, originals: list[_Plant], updates: list[tuple[_Plant, _Plant]]
) -> list[Question]:
    """One question per planted fact; an updated fact asks for the newest value only."""
    newest = {id(orig): upd for orig, upd in updates}
    out = []
    for n, orig in enumerate(originals):
        upd = newest.get(id(orig))
        if upd is None:
            q = Question(f"{conv_id}-q{n:02d}", conv_id, orig.slot.kind, rng.choice(orig.slot.questions),
                         [orig.event_id], orig.value)
        else:
            q = Question(f"{conv_id}-q{n:02d}", conv_id, "updated", rng.choice(orig.slot.updated_questions),
                         [upd.event_id], upd.value, [orig.value])
        out.append(q)
    return out


def generate_conversation(cfg: GeneratorConfig, index: int) -> tuple[Conversation, list[Question]]:
    """Conversation ``index`` of the dataset and its questions (independent of the others)."""
    rng = random.Random(f"{cfg.seed}/{index}")
    originals, updates, echoes = _plan_facts(rng, cfg)
    plants = originals + [u for _, u in updates] + echoes
    sessions, start = [], BASE_TIME + timedelta(days=index)
    for number in range(cfg.sessions):
        here = [p for p in plants if p.session == number]
        rng.shuffle(here)
        # An original and its update in one session: the original must come first.
        here.sort(key=lambda p: p.ack_kind == "update")
        sessions.append(_session(rng, cfg, index, number, start, here))
        start += timedelta(hours=rng.randint(20, 72))
    conv_id = f"c{index:03d}"
    return Conversation(conv_id, sessions), _questions(rng, conv_id, originals, updates)


def generate(cfg: GeneratorConfig | None = None) -> Dataset:
    """The whole dataset, checked for well-formedness (see :func:`check`)."""
    cfg = cfg or GeneratorConfig()
    if cfg.sessions < 2:
        raise ValueError("need at least two sessions (updates come after originals)")
    conversations, questions = [], []
    for index in range(cfg.conversations):
        conv, qs = generate_conversation(cfg, index)
        conversations.append(conv)
        questions.extend(qs)
    ds = Dataset(conversations, questions)
    check(ds)
    return ds


def check(ds: Dataset) -> None:
    """Raise ValueError unless the dataset is valid and unambiguous: every answer occurs in all of its
    evidence and in no other turn, and no stale value occurs in the evidence."""
    validate(ds)
    by_conv = {c.id: c.turns() for c in ds.conversations}
    for q in ds.questions:
        evidence = set(q.evidence_event_ids)
        for turn in by_conv[q.conversation_id]:
            has_answer = mentions(turn.content, q.answer)
            if (turn.event_id in evidence) != has_answer:
                raise ValueError(f"question {q.id}: answer {q.answer!r} vs turn {turn.event_id}")
            if turn.event_id in evidence and any(mentions(turn.content, s) for s in q.stale_values):
                raise ValueError(f"question {q.id}: stale value in evidence {turn.event_id}")
