"""The generic evidence-recall dataset format (see ``benchmarks/quality/README.md``).

A dataset is conversations (sessions of turns, every turn with a dataset-wide unique
``event_id``) plus questions, each annotated with the ids of the events that answer it and
the superseded values that must not be served as the answer. Any dataset in this shape (a
public one converted, or our own generator's) runs through the harness unchanged.

Files: one JSON object ``{"conversations": [...], "questions": [...]}``, or JSONL where each
line is ``{"conversation": {...}}`` or ``{"question": {...}}``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

ROLES = ("user", "assistant")


@dataclass(frozen=True)
class Turn:
    """One message: ``occurred_at`` is an ISO-8601 timestamp with a UTC offset."""

    event_id: str
    role: str
    content: str
    occurred_at: str
    author: str | None = None  # the speaker's name, when the chat names its speakers


@dataclass(frozen=True)
class Session:
    """A sitting of the conversation, turns in chronological order."""

    session_id: str
    turns: list[Turn]


@dataclass(frozen=True)
class Conversation:
    """Everything one user said to one assistant over many sessions (one anima)."""

    id: str
    sessions: list[Session]

    def turns(self) -> list[Turn]:
        """Every turn in order."""
        return [t for s in self.sessions for t in s.turns]


@dataclass(frozen=True)
class Question:
    """A question about one conversation; ``evidence_event_ids`` are all needed to answer it.

    ``stale_values``: superseded answers (case-insensitive whole words) a pack must not contain.
    """

    id: str
    conversation_id: str
    kind: str
    question: str
    evidence_event_ids: list[str]
    answer: str
    stale_values: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Dataset:
    """Conversations and the questions about them."""

    conversations: list[Conversation]
    questions: list[Question]

    def conversation(self, conversation_id: str) -> Conversation:
        """The conversation with this id (KeyError if absent)."""
        for c in self.conversations:
            if c.id == conversation_id:
                return c
        raise KeyError(conversation_id)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data (a turn without an author has no ``author`` key)."""
        return {
            "conversations": [_plain(c) for c in self.conversations],
            "questions": [asdict(q) for q in self.questions],
        }

    def dumps(self) -> str:
        """Canonical JSON (sorted keys, no whitespace): equal datasets give equal bytes."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _plain(conversation: Conversation) -> dict[str, Any]:
    raw = asdict(conversation)
    for session in raw["sessions"]:
        for turn in session["turns"]:
            if turn["author"] is None:
                del turn["author"]
    return raw


def _conversation(raw: dict[str, Any]) -> Conversation:
    sessions = [
        Session(
            str(s["session_id"]),
            [Turn(str(t["event_id"]), t["role"], t["content"], t["occurred_at"], t.get("author")) for t in s["turns"]],
        )
        for s in raw["sessions"]
    ]
    return Conversation(str(raw["id"]), sessions)


def _question(raw: dict[str, Any]) -> Question:
    return Question(
        id=str(raw["id"]),
        conversation_id=str(raw["conversation_id"]),
        kind=raw.get("kind", "all"),
        question=raw["question"],
        evidence_event_ids=[str(e) for e in raw["evidence_event_ids"]],
        answer=raw.get("answer", ""),
        stale_values=list(raw.get("stale_values", [])),
    )


def from_dict(raw: dict[str, Any]) -> Dataset:
    """Build (and validate) a dataset from plain data."""
    ds = Dataset([_conversation(c) for c in raw["conversations"]], [_question(q) for q in raw["questions"]])
    validate(ds)
    return ds


def load(path: Path) -> Dataset:
    """Read a ``.json`` or ``.jsonl`` dataset file."""
    text = Path(path).read_text(encoding="utf-8")
    if Path(path).suffix == ".jsonl":
        raw: dict[str, list] = {"conversations": [], "questions": []}
        for line in filter(str.strip, text.splitlines()):
            obj = json.loads(line)
            if "conversation" in obj:
                raw["conversations"].append(obj["conversation"])
            else:
                raw["questions"].append(obj["question"])
        return from_dict(raw)
    return from_dict(json.loads(text))


def save(ds: Dataset, path: Path) -> None:
    """Write ``ds`` as JSON (or JSONL when the name ends in ``.jsonl``)."""
    path = Path(path)
    if path.suffix == ".jsonl":
        lines = [json.dumps({"conversation": _plain(c)}, ensure_ascii=False) for c in ds.conversations]
        lines += [json.dumps({"question": asdict(q)}, ensure_ascii=False) for q in ds.questions]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    else:
        path.write_text(ds.dumps(), encoding="utf-8")


def validate(ds: Dataset) -> None:
    """Raise ValueError unless ids are unique, roles and timestamps valid, and every evidence id exists
    in its question's conversation."""
    where: dict[str, str] = {}
    for conv in ds.conversations:
        for turn in conv.turns():
            if turn.event_id in where:
                raise ValueError(f"duplicate event_id {turn.event_id!r}")
            if turn.role not in ROLES:
                raise ValueError(f"event {turn.event_id}: role must be one of {ROLES}, got {turn.role!r}")
            if datetime.fromisoformat(turn.occurred_at).tzinfo is None:
                raise ValueError(f"event {turn.event_id}: occurred_at needs a UTC offset")
            where[turn.event_id] = conv.id
    if len({c.id for c in ds.conversations}) != len(ds.conversations):
        raise ValueError("duplicate conversation id")
    for q in ds.questions:
        if not q.evidence_event_ids:
            raise ValueError(f"question {q.id}: no evidence")
        for eid in q.evidence_event_ids:
            if where.get(eid) != q.conversation_id:
                raise ValueError(f"question {q.id}: evidence {eid!r} is not in conversation {q.conversation_id!r}")
