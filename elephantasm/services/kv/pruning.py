"""Pruning a cached pack prefix, measured.

Item-aware: the pack knows each item's line, and the prefix is tokenized line by line, so every
item is a known token range; the lowest-scored items' ranges are removed from the KV cache
(``seq_rm``) and later positions shifted down (``seq_add``). Its retention is the certificate of
the pruned cache against recomputing the shorter pack text. Blind tail keeping (the last N
tokens, the usual "keep last N") is measured the same way for comparison.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from elephantasm.domain.kv.ranges import ItemSpan, choose_prune, item_spans
from elephantasm.services.kv.quality import measure

if TYPE_CHECKING:
    from elephantasm.local.engine import LocalEngine
    from elephantasm.services.kv.snapshots import Prefix


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
        return len(engine.prune(spans_desc))

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
    drop = choose_prune(item_spans(prefix.lines, prefix.starts, items), drop_fraction)
    result = _measure_cut(engine, prefix, drop, "recompute of the shorter pack", n_probes)
    return {"dropped_items": len(drop), **result}


def keep_tail(engine: LocalEngine, prefix: Prefix, keep: int, n_probes: int = 2) -> dict[str, Any]:
    """Blind pruning for comparison: keep only the last ``keep`` tokens of the cached prefix."""
    cut = max(0, len(prefix.tokens) - keep)
    spans = [ItemSpan("head", 0.0, 0, 0, cut)] if cut else []
    return _measure_cut(engine, prefix, spans, "recompute of the kept tail", n_probes)
