"""A seeded, deterministic generator of long multi-session user/assistant conversations.

Each conversation plants facts in the user's turns (``plan.py``: literal, paraphrased, updated and
spread-over-several-turns facts) and surrounds them with everyday chatter, some of it lexically
close to the facts ("my boss keeps sending me videos"). Sessions come in two styles:

- tidy: user/assistant pairs, full sentences, the assistant elaborating;
- noisy (share ``GeneratorConfig.noisy``): real-chat style, short lowercase messages with slang and
  typos, bursts from one side, several threads interleaved (a fact's turns stay in order).

Every fact yields one question annotated with the events that answer it. Same arguments →
byte-identical dataset (``Dataset.dumps()``): randomness comes only from ``random.Random`` seeded per
conversation, timestamps from a fixed base date.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from benchmarks.quality import chat
from benchmarks.quality.catalog import ACKS, CHATTER, ECHO_REPLIES, ELABORATIONS, FILL, SLOTS
from benchmarks.quality.dataset import Conversation, Dataset, Question, Session, Turn, validate
from benchmarks.quality.metrics import mentions
from benchmarks.quality.plan import PARAPHRASE, SPREAD, Fact, Plant, plan
from benchmarks.quality.words import shared_content_words

BASE_TIME = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)
RELATIONS = tuple(s.x for s in SLOTS if s.kind == "person")
Message = tuple[str, str, Plant | None]  # role, text, the plant it states


@dataclass(frozen=True)
class GeneratorConfig:
    """Shape of a generated dataset (per conversation: ``facts`` slot facts, of which ``updates`` are
    later updated and ``paraphrases`` paraphrased, the rest literal; plus ``spreads`` spread facts)."""

    seed: int = 7
    conversations: int = 8
    sessions: int = 20
    turns_per_session: int = 20
    facts: int = 12
    updates: int = 4
    paraphrases: int = 5
    spreads: int = 4
    echoes: int = 4  # mean number of value-free mentions of each fact's subject (±1)
    noisy: float = 0.5  # share of sessions in noisy chat style


def _fill(rng: random.Random) -> dict[str, object]:
    return {k: rng.choice(v) for k, v in FILL.items()} | {"n": rng.randint(2, 9), "x": rng.choice(RELATIONS)}


def _tidy(rng: random.Random, cfg: GeneratorConfig, plants: list[Plant]) -> list[Message]:
    """User/assistant pairs of chatter with the session's plants at random positions, in order."""
    pairs = max(cfg.turns_per_session // 2 + rng.randint(-1, 1), len(plants), 1)
    at = dict(zip(sorted(rng.sample(range(pairs), len(plants))), plants, strict=True))
    topics = rng.sample(CHATTER, len(CHATTER))  # no topic repeats within a session until all are used
    out: list[Message] = []
    for pair in range(pairs):
        plant = at.get(pair)
        if plant is not None:
            user, reply = plant.text, rng.choice(ECHO_REPLIES if plant.ack == "echo" else ACKS[plant.ack])
        else:
            fill = _fill(rng)
            user, reply = (s.format(**fill) for s in topics[pair % len(topics)])
        out += [
            ("user", user, plant),
            ("assistant", " ".join([reply, *rng.sample(ELABORATIONS, rng.randint(1, 2))]), None),
        ]
    return out


def _rough_plant(rng: random.Random, plant: Plant) -> str:
    """The plant as a chat message; a paraphrase statement falls back to its tidy text should noise ever
    make it share a word with its question."""
    text = chat.roughen(rng, plant.text, (plant.value,) if plant.value else ())
    return plant.text if plant.avoid and shared_content_words(plant.avoid, text) else text


def _noisy(rng: random.Random, cfg: GeneratorConfig, plants: list[Plant]) -> list[Message]:
    """Short threads (chatter, and one per fact present) interleaved message by message."""
    threads: dict[int, list[Message]] = {}
    for plant in plants:  # already in rank order: a fact's parts stay in order within its thread
        threads.setdefault(plant.fact, []).extend(
            [
                ("user", _rough_plant(rng, plant), plant),
                ("assistant", rng.choice(chat.ECHO_ACKS if plant.ack == "echo" else chat.ACKS), None),
            ]
        )
    alive = list(threads.values())
    target = cfg.turns_per_session + rng.randint(-2, 2)
    for thread in rng.sample(chat.THREADS, len(chat.THREADS)):
        if sum(map(len, alive)) >= target:
            break
        fill = _fill(rng)
        alive.append(
            [
                (
                    "user" if r == "u" else "assistant",
                    chat.roughen(rng, t.format(**fill)) if r == "u" else t.format(**fill),
                    None,
                )
                for r, t in thread
            ]
        )
    out: list[Message] = []
    current = rng.randrange(len(alive)) if alive else 0
    while alive:
        if current >= len(alive) or rng.random() < 0.5:  # switch thread half of the time
            current = rng.randrange(len(alive))
        out.append(alive[current].pop(0))
        if not alive[current]:
            alive.pop(current)
    return out


def _session(
    rng: random.Random, cfg: GeneratorConfig, session_id: str, start: datetime, plants: list[Plant]
) -> Session:
    noisy = rng.random() < cfg.noisy
    messages = _noisy(rng, cfg, plants) if noisy else _tidy(rng, cfg, plants)
    turns, t = [], start
    for role, text, plant in messages:
        t += timedelta(seconds=rng.randint(5, 90) if noisy else rng.randint(30, 150))
        event_id = f"{session_id}-t{len(turns):02d}"
        if plant is not None:
            plant.event_id = event_id
        turns.append(Turn(event_id, role, text, t.isoformat()))
    return Session(session_id, turns)


def _check_values(conv: Conversation, plants: list[Plant]) -> None:
    """Every planted value occurs in the turns that state it and nowhere else (so evidence is exact)."""
    where: dict[str, set[str]] = {}
    for p in plants:
        if p.value:
            where.setdefault(p.value, set()).add(p.event_id)
    for turn in conv.turns():
        for value, ids in where.items():
            if mentions(turn.content, value) != (turn.event_id in ids):
                raise ValueError(f"value {value!r} vs turn {turn.event_id}: {turn.content!r}")


def generate_conversation(cfg: GeneratorConfig, index: int) -> tuple[Conversation, list[Question]]:
    """Conversation ``index`` of the dataset and its questions (independent of the others)."""
    rng = random.Random(f"{cfg.seed}/{index}")
    facts, plants = plan(rng, cfg)
    conv_id = f"c{index:03d}"
    sessions, start = [], BASE_TIME + timedelta(days=index)
    for number in range(cfg.sessions):
        here = [p for p in plants if p.session == number]
        rng.shuffle(here)
        here.sort(key=lambda p: p.rank)  # an original before its update, spread parts in order
        sessions.append(_session(rng, cfg, f"{conv_id}-s{number:02d}", start, here))
        start += timedelta(hours=rng.randint(20, 72))
    conv = Conversation(conv_id, sessions)
    _check_values(conv, plants)
    return conv, [_question(conv_id, n, f) for n, f in enumerate(facts)]


def _question(conv_id: str, n: int, fact: Fact) -> Question:
    return Question(
        f"{conv_id}-q{n:02d}",
        conv_id,
        fact.kind,
        fact.question,
        [p.event_id for p in fact.evidence],
        fact.answer,
        list(fact.stale),
    )


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
    """Raise ValueError unless the dataset is valid and unambiguous: each answer occurs in its last
    evidence turn and in no turn outside the evidence, no stale value occurs in the evidence, a spread
    question has ≥ 2 evidence turns, and a paraphrase question shares no content word with its evidence."""
    validate(ds)
    by_conv = {c.id: {t.event_id: t for t in c.turns()} for c in ds.conversations}
    for q in ds.questions:
        turns = by_conv[q.conversation_id]
        evidence = [turns[e] for e in q.evidence_event_ids]
        if not mentions(evidence[-1].content, q.answer):
            raise ValueError(f"question {q.id}: answer {q.answer!r} not in {evidence[-1].event_id}")
        for turn in turns.values():
            if turn.event_id not in q.evidence_event_ids and mentions(turn.content, q.answer):
                raise ValueError(f"question {q.id}: answer {q.answer!r} also in {turn.event_id}")
        for turn in evidence:
            if any(mentions(turn.content, s) for s in q.stale_values):
                raise ValueError(f"question {q.id}: stale value in evidence {turn.event_id}")
            if q.kind == PARAPHRASE and shared_content_words(q.question, turn.content):
                raise ValueError(f"question {q.id} shares content words with {turn.event_id}")
        if q.kind == SPREAD and len(evidence) < 2:
            raise ValueError(f"spread question {q.id} has fewer than two evidence turns")
