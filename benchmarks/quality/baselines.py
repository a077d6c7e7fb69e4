"""Baselines that pack raw turns, no memory service involved.

Both render one line per turn, ``- role: content`` (whitespace collapsed), joined by newlines, and
fit the same ``max_tokens`` budget counted with the same token counter as Elephantasm's packs:

- :func:`recent_turns`: the most recent turns that fit, a contiguous tail of the conversation,
  shown chronologically (what a plain chat history window gives an agent);
- :class:`BM25Baseline`: every turn ranked by BM25 against the question, greedily packed in rank
  order (a turn that does not fit is skipped and the next one tried, as Elephantasm's packer does);
- ``dense.DenseBaseline``: the same packing over turns ranked by embedding cosine to the question.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from benchmarks.quality.bm25 import BM25
from benchmarks.quality.dataset import Turn

TokenCount = Callable[[str], int]


@dataclass(frozen=True)
class RawPack:
    """A baseline's prompt text, the dataset event ids it contains, and its exact token count."""

    context: str
    event_ids: tuple[str, ...]
    token_count: int


def turn_line(turn: Turn) -> str:
    """The line a turn renders to (without newline)."""
    return f"- {turn.role}: {' '.join(turn.content.split())}"


def greedy_pack(
    turns: Sequence[Turn], budget: int, count: TokenCount, *, contiguous: bool, chronological: bool
) -> RawPack:
    """Take turns in the given priority order while they fit ``budget`` tokens.

    ``contiguous`` stops at the first turn that does not fit (else skip it and try the next);
    ``chronological`` renders the chosen turns in time order instead of priority order. Each line
    is costed with its newline (conservative), then the final text is counted exactly and the
    lowest-priority turns dropped should BPE merges ever push it over.
    """
    chosen: list[Turn] = []
    used = 0
    for turn in turns:
        cost = count(turn_line(turn) + "\n")
        if used + cost <= budget:
            chosen.append(turn)
            used += cost
        elif contiguous:
            break
    while True:
        shown = sorted(chosen, key=lambda t: (t.occurred_at, t.event_id)) if chronological else chosen
        text = "\n".join(turn_line(t) for t in shown)
        tokens = count(text) if text else 0
        if tokens <= budget:
            return RawPack(text, tuple(t.event_id for t in shown), tokens)
        chosen.pop()


def recent_turns(turns: Sequence[Turn], budget: int, count: TokenCount) -> RawPack:
    """The newest turns that fit, as one contiguous window, oldest first."""
    newest_first = sorted(turns, key=lambda t: (t.occurred_at, t.event_id), reverse=True)
    return greedy_pack(newest_first, budget, count, contiguous=True, chronological=True)


class RankedBaseline:
    """Raw turns ranked for a query by :meth:`ranked` (subclasses), packed greedily in rank order."""

    _last: tuple[str, list[Turn]] | None = None

    def ranked(self, query: str) -> list[Turn]:
        """Turns in rank order, best first."""
        raise NotImplementedError

    def pack(self, query: str, budget: int, count: TokenCount) -> RawPack:
        """The best-ranked turns that fit ``budget``, in rank order (the ranking of the last query is
        reused, as the runner packs one question at several budgets)."""
        if self._last is None or self._last[0] != query:
            self._last = (query, self.ranked(query))
        return greedy_pack(self._last[1], budget, count, contiguous=False, chronological=False)


class BM25Baseline(RankedBaseline):
    """BM25 over one conversation's raw turns, packed greedily for a query."""

    def __init__(self, turns: Sequence[Turn]) -> None:
        self.turns = list(turns)
        self.index = BM25([t.content for t in self.turns])

    def ranked(self, query: str) -> list[Turn]:
        """Turns with any query term, best first."""
        return [self.turns[i] for i in self.index.ranking(query)]
