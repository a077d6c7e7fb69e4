"""Run an evidence-recall evaluation of any dataset against a live server, baselines alongside.

Per conversation: one anima, every turn ingested as an event (times shifted so the conversation
ends an hour before the run, as if the agent were asked right after it), a dream with the server's
engine until nothing is pending; then, for each question and budget, Elephantasm's
``memory-packs/latest`` with the question as query, and the raw-turn baselines (recent turns, BM25,
dense) at the same budget with the same token counter.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from benchmarks.quality.baselines import BM25Baseline, RankedBaseline, recent_turns
from benchmarks.quality.client import PACK_LISTS, MemoryClient, cited_events
from benchmarks.quality.dataset import Conversation, Dataset, Question
from benchmarks.quality.db import distilled, memory_states
from benchmarks.quality.dense import DenseBaseline, SyncEmbedder, configured_embedder
from benchmarks.quality.metrics import Outcome, mentions, score_pack
from benchmarks.quality.pack_shares import token_shares
from elephantasm.tokens import get_token_counter

BUDGETS = (250, 500, 1000, 2000, 4000)
ENCODING = "o200k_base"
ELEPHANTASM, RECENT, BM25, DENSE = "elephantasm", "recent turns", "bm25 turns", "dense turns"
SYSTEMS = (ELEPHANTASM, RECENT, BM25, DENSE)
BASELINES = (RECENT, BM25, DENSE)
# Diagnostic variants of Elephantasm's default preset (``POST /api/packs/compile`` overrides): which
# score factor or cap starves evidence. Run after a conversation's default packs, so the recalls
# they record never influence the default figures.
ABLATIONS: dict[str, dict[str, Any]] = {
    "elephantasm, recency weight 0": {"weights": {"recency": 0}},
    "elephantasm, relevance only, caps 200": {
        "weights": {"importance": 0.001, "confidence": 0, "recency": 0, "decay": 0, "relevance": 1},
        "limits": {"long_term": 200, "knowledge": 200, "session": 200},
    },
}


@dataclass(frozen=True)
class PackTrace:
    """What one Elephantasm pack held: items per layer, and which layers carried a stale value."""

    question_id: str
    budget: int
    layers: dict[str, int]
    stale_layers: tuple[str, ...]
    answer_present: bool
    tokens: dict[str, int] = field(default_factory=dict)  # pack_shares.token_shares of the pack


@dataclass
class Evaluation:
    """Everything a report needs."""

    outcomes: list[Outcome] = field(default_factory=list)
    traces: list[PackTrace] = field(default_factory=list)
    evidence_state: dict[str, str] = field(default_factory=dict)  # question id → live|archived|none
    states: Counter[str] = field(default_factory=Counter)
    answer_present: dict[tuple[str, int], list[bool]] = field(default_factory=dict)
    seconds: Counter[str] = field(default_factory=Counter)
    pack_calls: int = 0
    dream_runs: int = 0
    dense_embedder: str = ""


def shift_to(conversation: Conversation, end: datetime) -> timedelta:
    """Offset that moves the conversation's last turn to ``end`` (whole seconds)."""
    last = max(datetime.fromisoformat(t.occurred_at) for t in conversation.turns())
    return timedelta(seconds=int((end - last).total_seconds()))


def _item_text(item: dict[str, Any]) -> str:
    return " ".join(str(item.get(k) or "") for k in ("summary", "content"))


def _trace(
    question: Question, budget: int, pack: dict[str, Any] | None, count: Callable[[str], int] | None = None
) -> PackTrace:
    content = (pack or {}).get("content") or {}
    context = (pack or {}).get("context") or ""
    layers = {name: len(content.get(name) or []) for name in PACK_LISTS}
    stale = tuple(
        name
        for name in PACK_LISTS
        for item in content.get(name) or []
        if any(mentions(_item_text(item), v) for v in question.stale_values)
    )
    if question.stale_values and not stale and any(mentions(context, v) for v in question.stale_values):
        stale = ("other",)
    tokens = token_shares(pack, count) if pack and count is not None else {}
    return PackTrace(question.id, budget, layers, tuple(sorted(set(stale))), mentions(context, question.answer), tokens)


class _Run:
    def __init__(
        self,
        client: MemoryClient | None,
        budgets: Sequence[int],
        encoding: str,
        preset: str | None,
        database_url: str | None,
        embedder: SyncEmbedder,
    ) -> None:
        self.client, self.budgets, self.encoding, self.preset = client, budgets, encoding, preset
        self.database_url, self.embedder = database_url, embedder
        self.count = get_token_counter(encoding)
        self.ev = Evaluation(dense_embedder=embedder.name)

    def _timed(self, phase: str, fn: Callable[[], Any]) -> Any:
        started = time.perf_counter()
        try:
            return fn()
        finally:
            self.ev.seconds[phase] += time.perf_counter() - started

    def _record(self, system: str, q: Question, budget: int, cited: set[str], context: str, tokens: int) -> None:
        self.ev.outcomes.append(score_pack(system, q, budget, cited, context, tokens))
        self.ev.answer_present.setdefault((system, budget), []).append(mentions(context, q.answer))

    def conversation(self, conv: Conversation, questions: list[Question], end: datetime) -> None:
        client = self.client
        assert client is not None, "baselines-only runs have no server"
        anima = client.create_anima(f"quality-{conv.id}")
        id_map = self._timed("ingest", lambda: client.ingest(anima, conv, shift_to(conv, end)))
        runs = self._timed("dream", lambda: client.dream(anima))
        self.ev.dream_runs += len(runs)
        if self.database_url:
            self._diagnose(anima, questions)
        for q in questions:
            for budget in self.budgets:
                pack = self._timed(
                    "packs",
                    lambda q=q, budget=budget: client.latest_pack(
                        anima, q.question, budget, self.encoding, self.preset
                    ),
                )
                self.ev.pack_calls += 1
                self._record(
                    ELEPHANTASM,
                    q,
                    budget,
                    cited_events(pack, id_map),
                    (pack or {}).get("context") or "",
                    int((pack or {}).get("token_count") or 0),
                )
                self.ev.traces.append(_trace(q, budget, pack, self.count))
        self.baselines(conv, questions)
        for name, overrides in ABLATIONS.items():
            for q in questions:
                for budget in self.budgets:
                    pack = client.compile_pack(anima, q.question, budget, self.encoding, overrides)
                    self._record(
                        name,
                        q,
                        budget,
                        cited_events(pack, id_map),
                        pack.get("context") or "",
                        int(pack.get("token_count") or 0),
                    )

    def baselines(self, conv: Conversation, questions: list[Question]) -> None:
        """Recent turns, BM25 and dense packs for every question and budget."""
        turns = conv.turns()
        dense = self._timed("dense index", lambda: DenseBaseline(turns, self.embedder))
        ranked: dict[str, RankedBaseline] = {BM25: BM25Baseline(turns), DENSE: dense}
        for q in questions:
            for budget in self.budgets:
                raw = recent_turns(turns, budget, self.count)
                self._record(RECENT, q, budget, set(raw.event_ids), raw.context, raw.token_count)
                for system, baseline in ranked.items():
                    raw = baseline.pack(q.question, budget, self.count)
                    self._record(system, q, budget, set(raw.event_ids), raw.context, raw.token_count)

    def _diagnose(self, anima: str, questions: list[Question]) -> None:
        cited = distilled(self.database_url or "", anima)
        self.ev.states.update(memory_states(self.database_url or "", anima))
        for q in questions:
            flags = [cited.get(e) for e in q.evidence_event_ids]
            self.ev.evidence_state[q.id] = (
                "live" if all(flags) else "none" if any(f is None for f in flags) else "archived"
            )


def evaluate(
    ds: Dataset,
    base_url: str,
    headers: dict[str, str],
    *,
    budgets: Sequence[int] = BUDGETS,
    encoding: str = ENCODING,
    preset: str | None = None,
    database_url: str | None = None,
    embedder: SyncEmbedder | None = None,
    log: Callable[[str], None] = print,
) -> Evaluation:
    """Evaluate every question of ``ds`` at every budget for Elephantasm and the baselines.

    ``database_url`` (optional) enables diagnostics read straight from Postgres: whether each
    question's evidence ended up in a live memory, and memory/knowledge counts by state.
    ``embedder`` is the dense baseline's (default: the configured one, as the server builds it); the
    caller closes one it passes in.
    """
    client = MemoryClient(base_url, headers)
    sync = embedder or SyncEmbedder(configured_embedder())
    run = _Run(client, budgets, encoding, preset, database_url, sync)
    end = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1)
    try:
        for n, conv in enumerate(ds.conversations, 1):
            questions = [q for q in ds.questions if q.conversation_id == conv.id]
            started = time.perf_counter()
            run.conversation(conv, questions, end)
            log(
                f"   conversation {n}/{len(ds.conversations)} ({len(conv.turns())} turns, "
                f"{len(questions)} questions) in {time.perf_counter() - started:.1f} s"
            )
    finally:
        client.close()
        if embedder is None:
            sync.close()
    return run.ev


def evaluate_baselines(
    ds: Dataset, *, embedder: SyncEmbedder, budgets: Sequence[int] = BUDGETS, encoding: str = ENCODING
) -> Evaluation:
    """Only the raw-turn baselines, no server: seconds, to compare datasets or embedders quickly."""
    run = _Run(None, budgets, encoding, None, None, embedder)
    for conv in ds.conversations:
        run.baselines(conv, [q for q in ds.questions if q.conversation_id == conv.id])
    return run.ev
