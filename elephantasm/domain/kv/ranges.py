"""Token-range maps of pack items, for item-aware pruning of a cached prefix.

The prefix is tokenized line by line (every path does the same, so token ids always agree), which
makes each rendered pack line a known token range. An item is located by its rendered text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ItemSpan:
    """A pack item's line in the prefix and its token range ``[start, end)``."""

    item_id: str
    score: float
    line: int
    start: int
    end: int

    @property
    def n_tokens(self) -> int:
        return self.end - self.start


def split_lines(text: str) -> list[str]:
    """``text`` cut after every newline (joining the pieces gives ``text`` back)."""
    return text.splitlines(keepends=True)


def line_offsets(lines: Sequence[str], tokenize: Callable[[str, int], list[int]]) -> tuple[list[int], list[int]]:
    """All token ids and each line's start offset; ``tokenize(line, index)`` tokenizes one line."""
    tokens: list[int] = []
    starts: list[int] = []
    for i, line in enumerate(lines):
        starts.append(len(tokens))
        tokens.extend(tokenize(line, i))
    starts.append(len(tokens))
    return tokens, starts


def item_spans(lines: Sequence[str], starts: Sequence[int], items: Sequence[tuple[str, str, float]]) -> list[ItemSpan]:
    """Spans of ``items`` (id, rendered text, score); an item whose text is on no line is skipped.

    Each line belongs to at most one item (the first that matches), so spans never overlap.
    """
    taken: set[int] = set()
    spans = []
    for item_id, text, score in items:
        needle = text.strip()
        if not needle:
            continue
        for i, line in enumerate(lines):
            if i not in taken and needle in line:
                taken.add(i)
                spans.append(ItemSpan(item_id, score, i, starts[i], starts[i + 1]))
                break
    return spans


def choose_prune(spans: Sequence[ItemSpan], drop_fraction: float) -> list[ItemSpan]:
    """The lowest-scored items making up about ``drop_fraction`` of the items (ties: later first).

    Returned in descending position order, the order in which ranges must be removed so earlier
    positions stay valid while later ones shift.
    """
    if not spans or drop_fraction <= 0:
        return []
    n = max(1, round(len(spans) * min(drop_fraction, 1.0)))
    ranked = sorted(spans, key=lambda s: (s.score, -s.start))[:n]
    return sorted(ranked, key=lambda s: s.start, reverse=True)
