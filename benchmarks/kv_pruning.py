"""Pruning a cached pack prefix, measured (the ``kv`` benchmark's pruning rows; the server never prunes).

Item-aware: the prefix is tokenized line by line, so every pack item's line is a known token range;
the lowest-scored items' ranges are removed from the KV cache (``seq_rm``) and later positions
shifted down (``seq_add``). Its retention is the certificate of the pruned cache against
recomputing the shorter pack text. Blind tail keeping (the usual "keep last N") is measured the
same way for comparison.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from elephantasm.domain.kv.ranges import line_offsets, split_lines
from elephantasm.local.engine import LocalEngine
from elephantasm.services.kv.quality import measure
from elephantasm.services.kv.snapshots import Prefix


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


def prune_cache(engine: LocalEngine, spans_desc: Sequence[ItemSpan]) -> list[int]:
    """Remove item ranges from the engine's cache (highest position first) and shift later
    positions down; returns the token ids the cache now holds (caller holds the lock)."""
    mem = engine._memory()
    tokens = engine.llm.input_ids[: engine.llm.n_tokens].tolist()
    for span in spans_desc:
        engine._c.llama_memory_seq_rm(mem, 0, span.start, span.end)
        engine._c.llama_memory_seq_add(mem, 0, span.end, -1, -span.n_tokens)
        del tokens[span.start : span.end]
    engine.llm.input_ids[: len(tokens)] = tokens
    engine.llm.n_tokens = len(tokens)
    engine.n_exact, engine.owner = 0, None  # shifted positions: no longer any prompt's exact KV
    return tokens


def without(tokens: Sequence[int], spans_desc: Sequence[ItemSpan]) -> list[int]:
    """``tokens`` with the spans' ranges removed (spans in descending position order)."""
    kept = list(tokens)
    for span in spans_desc:
        del kept[span.start : span.end]
    return kept


def _measure_cut(
    engine: LocalEngine, prefix: Prefix, spans_desc: Sequence[ItemSpan], reference: str, n_probes: int
) -> dict[str, Any]:
    """Certificate of the cache with ``spans_desc`` cut out vs recomputing the text that remains."""
    short = without(prefix.tokens, spans_desc)

    def recompute_short() -> int:
        engine.prefill(short)
        return len(short)

    def prune_cached() -> int:
        engine.prefill(prefix.tokens)
        return len(prune_cache(engine, spans_desc))

    with engine.lock:
        cert = measure((engine, recompute_short), (engine, prune_cached), reference, n_probes=n_probes)
    return {"tokens_before": len(prefix.tokens), "tokens_after": len(short), "certificate": cert}


def prune_items(
    engine: LocalEngine,
    prefix: Prefix,
    items: Sequence[tuple[str, str, float]],
    drop_fraction: float,
    n_probes: int = 2,
) -> dict[str, Any]:
    """Drop about ``drop_fraction`` of the items (lowest scores) from the cached prefix; certificate
    against recomputing the shorter text, plus the sizes (blocking; takes the engine lock)."""
    lines = split_lines(prefix.text)
    _, starts = line_offsets(lines, engine.tokenize_line)  # the engine tokenizes a prefix line by line
    drop = choose_prune(item_spans(lines, starts, items), drop_fraction)
    result = _measure_cut(engine, prefix, drop, "recompute of the shorter pack", n_probes)
    return {"dropped_items": len(drop), **result}


def keep_tail(engine: LocalEngine, prefix: Prefix, keep: int, n_probes: int = 2) -> dict[str, Any]:
    """Blind pruning for comparison: keep only the last ``keep`` tokens of the cached prefix."""
    cut = max(0, len(prefix.tokens) - keep)
    spans = [ItemSpan("head", 0.0, 0, 0, cut)] if cut else []
    return _measure_cut(engine, prefix, spans, "recompute of the kept tail", n_probes)
