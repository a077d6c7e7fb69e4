"""``python -m benchmarks knowledge``: how good the offline engine's knowledge lines are.

The generator's conversations (the quality dataset of the size, and the two-person chats of
``benchmarks.quality.duo``) are distilled in-process by the offline engine, exactly as the dreamer
would, and every FACT/EXPERIENCE line it writes is judged:

- **malformed**: share of lines failing the rule-based well-formedness test
  (``elephantasm.domain.dreaming.wellformed.malformation``: dangling function word, first/second
  person left in, a pronoun or stock phrase as the whole object, a plan without a verb, a time span
  as an object, no subject–verb–object frame), with the count per reason;
- **precision**: share of lines that state a planted value (a fact the generator put in the chat);
- **recall**: share of planted facts (each question's answer in its last evidence turn) that some
  knowledge line states while citing that turn.

No server, no database: seconds. Nothing is asserted; figures go to ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from datetime import datetime

from benchmarks.quality.bench import SIZES
from benchmarks.quality.dataset import Dataset
from benchmarks.quality.duo import DuoConfig, generate_duo
from benchmarks.quality.generator import generate
from benchmarks.quality.metrics import mentions
from benchmarks.results import Section
from elephantasm.domain.dreaming import EventInput, KnowledgeDraft, distil_offline
from elephantasm.domain.dreaming.wellformed import malformation

TITLE = "Offline knowledge: malformed lines, precision and recall of planted facts"
_NS = uuid.UUID("0b4d8a60-5a7e-4c59-9a51-1f0e8e0c2d11")
DUO_SIZES = {"tiny": DuoConfig(conversations=1, sessions=4), "small": DuoConfig(), "full": DuoConfig(conversations=8)}


def _events(ds: Dataset, conversation_id: str) -> list[EventInput]:
    conv = ds.conversation(conversation_id)
    return [
        EventInput(
            index=n,
            id=uuid.uuid5(_NS, turn.event_id),
            event_type="message.in" if turn.role == "user" else "message.out",
            role=turn.role,
            author=turn.author,
            content=turn.content,
            occurred_at=datetime.fromisoformat(turn.occurred_at),
            session_id=session.session_id,
        )
        for n, (session, turn) in enumerate((s, t) for s in conv.sessions for t in s.turns)
    ]


def judge(ds: Dataset) -> dict[str, object]:
    """Lines, malformed share and reasons, precision and recall over one dataset."""
    lines: list[KnowledgeDraft] = []
    reasons: Counter[str] = Counter()
    stated = hits = planted = 0
    events_total, seconds = 0, 0.0
    for conv in ds.conversations:
        events = _events(ds, conv.id)
        started = time.perf_counter()
        result = distil_offline(events)
        seconds += time.perf_counter() - started
        events_total += len(events)
        facts = [k for k in result.knowledge if k.type in ("FACT", "EXPERIENCE")]
        lines += facts
        questions = [q for q in ds.questions if q.conversation_id == conv.id]
        values = {v for q in questions for v in (q.answer, *q.stale_values) if v}
        stated += sum(1 for k in facts if any(mentions(k.content, v) for v in values))
        for q in questions:
            planted += 1
            evidence = uuid.uuid5(_NS, q.evidence_event_ids[-1])
            hits += any(evidence in k.source_event_ids and mentions(k.content, q.answer) for k in facts)
    for k in lines:
        reason = malformation(k.content)
        if reason:
            reasons[reason] += 1
    n = len(lines)
    return {
        "lines": n,
        "malformed": sum(reasons.values()) / n if n else 0.0,
        "reasons": reasons,
        "precision": stated / n if n else 0.0,
        "recall": hits / planted if planted else 0.0,
        "planted": planted,
        "events_per_s": events_total / seconds if seconds else 0.0,
        "examples": [k.content for k in lines],
    }


def _pct(x: object) -> str:
    return f"{float(x):.1%}"  # type: ignore[arg-type]


def run(size: str) -> Section:
    """Judge the offline engine's knowledge on the generated datasets of ``size``."""
    sets = {"generated (quality)": generate(SIZES[size]), "two-person chats (duo)": generate_duo(DUO_SIZES[size])}
    rows, notes = [], []
    for name, ds in sets.items():
        r = judge(ds)
        reasons = r["reasons"]
        assert isinstance(reasons, Counter)
        rows.append(
            [
                name,
                f"{r['lines']:,}",
                _pct(r["malformed"]),
                ", ".join(f"{k} {v}" for k, v in reasons.most_common()) or "-",
                _pct(r["precision"]),
                f"{_pct(r['recall'])} of {r['planted']}",
                f"{float(r['events_per_s']):,.0f}",  # type: ignore[arg-type]
            ]
        )
        examples = r["examples"]
        assert isinstance(examples, list)
        notes.append(f"{name}, first lines: " + " | ".join(examples[:12]))
    notes.insert(
        0,
        "FACT/EXPERIENCE lines of `distil_offline` over every conversation; malformed by "
        "`elephantasm.domain.dreaming.wellformed.malformation`; precision: lines stating a planted value; "
        "recall: planted facts stated by a line citing their evidence turn. events/s: the whole offline "
        "distillation (memories, knowledge, identity), in-process.",
    )
    return Section(
        name="knowledge",
        title=TITLE,
        headers=["dataset", "lines", "malformed", "reasons", "precision", "recall", "events/s"],
        rows=rows,
        notes=notes,
    )
