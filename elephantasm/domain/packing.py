"""The budgeted packer: choose items per layer so the rendered prompt fits ``max_tokens`` exactly.

Algorithm (two rounds, then an exact check):

1. **Reserved round.** Each layer walks its candidates in rank order (score desc, time desc,
   id asc) and takes the longest *prefix* that fits in its share of the budget.
2. **Overflow round.** Whatever is left over (unused shares) forms one pool. All remaining
   candidates of all layers are walked in one global rank order; each is taken if it fits the
   pool, else skipped and the next one tried.
3. **Exact check.** The final text is rendered and counted exactly (:func:`rendered_tokens`);
   should BPE merges across line boundaries ever make it longer than estimated, the lowest-ranked
   items are dropped until it fits.

Why a *prefix* in round 1: if round 1 skipped items, a later, lower-ranked item could take
reserved space that an earlier, larger item needed in round 2, so adding a low candidate could
evict a higher one. With a prefix, every decision about an item depends only on items ranked
above it in its own layer (round 1) or globally (round 2), which gives the guarantees:

* adding a candidate never evicts a higher-ranked item of the same layer;
* a layer whose whole demand fits its own share is unaffected by other layers' candidates;
* with a single non-empty layer the result is plain greedy-with-skip over the whole budget.

Each line is rendered and counted once, when the packer first weighs it (memoised by the token
counter); the whole text is not encoded again: its exact count is summed from its lines'
(:func:`rendered_tokens`). Estimates are conservative: the last line's newline is budgeted
although rendering strips it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter, itemgetter

from elephantasm.domain.distinct import line_key
from elephantasm.domain.errors import ValidationError
from elephantasm.domain.pack_trace import Decision, PackTrace
from elephantasm.domain.render import (
    LAYER_SEPARATOR,
    RENDER_ORDER,
    Layer,
    PackItem,
    display_key,
    global_rank_key,
    header_line,
    item_line,
    render_lines,
)

TokenCount = Callable[[str], int]

# Identity and temporal lines are structural, not scored memories: min_score never drops them.
SCORED_LAYERS = frozenset({Layer.KNOWLEDGE, Layer.LONG_TERM, Layer.SESSION})
# Which layer serves a line that two layers would show (``distinct``): the current session first,
# since it carries the conversation being had, read in order, and a memory repeating what was just
# said is its echo there; otherwise the earlier layer in render order (knowledge before long-term).
CLAIM_ORDER = (Layer.SESSION, Layer.KNOWLEDGE, Layer.LONG_TERM)


@dataclass(frozen=True, slots=True)
class PackResult:
    """Chosen items per layer (display order; every layer key present), the text and its exact count."""

    layers: Mapping[Layer, tuple[PackItem, ...]]
    text: str
    token_count: int
    max_tokens: int
    trimmed: int = 0
    layer_tokens: Mapping[Layer, int] = field(default_factory=dict)
    """Exact tokens of each non-empty layer's block (header and lines), as encoded on its own."""
    echoes: Mapping[tuple[Layer, str], tuple[PackItem, ...]] = field(default_factory=dict)
    """Per chosen ``(layer, id)``: the candidates left out because they would render the same line
    (``distinct``); the served line stands for them, so a caller may cite their evidence too."""

    def items(self, layer: Layer) -> tuple[PackItem, ...]:
        """Chosen items of one layer."""
        return self.layers.get(layer, ())


@dataclass(slots=True)
class _Cand:
    layer: Layer
    item: PackItem
    key: tuple[float, float, str, int]  # global_rank_key(layer, item)
    # The rendered line and its token count, made when the packer first weighs the candidate
    # (:func:`_costed`): most of a compile's candidates rank below what its budget and layer
    # limits let it reach, and are never rendered or counted. ``cost`` < 0: not yet.
    line: str = ""
    cost: int = -1
    # Lower-ranked candidates that would render this very line, left out in its favour (``distinct``).
    echoes: list[PackItem] = field(default_factory=list)


def _costed(c: _Cand, count: TokenCount) -> int:
    """``c``'s line's token count, rendering and counting it on first use."""
    if c.cost < 0:
        c.line = item_line(c.layer, c.item)
        c.cost = count(c.line)
    return c.cost


def normalise_shares(shares: Mapping[Layer, float] | Mapping[str, float] | None) -> dict[Layer, float]:
    """Shares as fractions summing to 1 over all layers (missing → 0; None → equal)."""
    if shares is None:
        return {layer: 1.0 / len(RENDER_ORDER) for layer in RENDER_ORDER}
    raw = {Layer(k): float(v) for k, v in shares.items()}
    if any(v < 0 for v in raw.values()) or sum(raw.values()) <= 0:
        raise ValidationError("layer shares must be >= 0 and not all zero")
    total = sum(raw.values())
    return {layer: raw.get(layer, 0.0) / total for layer in RENDER_ORDER}


def _prepare(
    candidates: Mapping[Layer, Iterable[PackItem]],
    min_score: float | None,
    trace: PackTrace | None = None,
    distinct: bool = False,
) -> dict[Layer, list[_Cand]]:
    """Filter, de-duplicate by id (best rank wins) and sort the candidates (costed later: :func:`_costed`);
    ``distinct``: see :func:`_serve_once`."""
    prepared: dict[Layer, list[_Cand]] = {}
    for layer in RENDER_ORDER:
        # The layer's rank is the same for all, so this is rank_key's order within the layer.
        ranked = sorted(((global_rank_key(layer, it), it) for it in candidates.get(layer, ())), key=itemgetter(0))
        seen: set[str] = set()
        out: list[_Cand] = []
        for key, it in ranked:
            if it.id in seen or not it.text or it.text.isspace():
                if trace is not None:
                    trace.note(layer, it, Decision.DUPLICATE if it.id in seen else Decision.EMPTY)
                continue
            if min_score is not None and layer in SCORED_LAYERS and it.score < min_score:
                if trace is not None:
                    trace.note(layer, it, Decision.BELOW_MIN_SCORE)
                continue
            seen.add(it.id)
            out.append(_Cand(layer, it, key))
        prepared[layer] = out
    if distinct:
        _serve_once(prepared, trace)
    return prepared


def _serve_once(prepared: dict[Layer, list[_Cand]], trace: PackTrace | None) -> None:
    """``distinct``: a scored line that restates another (:func:`~elephantasm.domain.distinct.line_key`, the
    same label, in any scored layer, on any date) is served once, by the layer first in :data:`CLAIM_ORDER`
    that has it, in its best-ranked copy there. Said again on another day, chatter would otherwise fill a
    dated pack with one line; the copy served echoes the others (``PackResult.echoes``: their evidence is
    cited with it) and ranks as the best of them, so a line moved between layers keeps its place.
    """
    claimed: dict[tuple[str, str | None], _Cand] = {}
    for layer in CLAIM_ORDER:
        kept: list[_Cand] = []
        for c in prepared[layer]:
            served = claimed.setdefault((line_key(c.item.text), c.item.label), c)
            if served is c:
                kept.append(c)
                continue
            served.echoes += [c.item, *c.echoes]
            served.key = min(served.key[:2], c.key[:2]) + served.key[2:]
            if trace is not None:
                trace.note(layer, c.item, Decision.DUPLICATE)
        prepared[layer] = kept
    for layer in CLAIM_ORDER:
        prepared[layer].sort(key=attrgetter("key"))


def _select(
    prepared: dict[Layer, list[_Cand]],
    count: TokenCount,
    budget: float,
    shares: dict[Layer, float],
    limits: Mapping[Layer, int],
    opening: dict[Layer, int],
    trace: PackTrace | None = None,
) -> dict[Layer, list[_Cand]]:
    """Rounds 1 and 2 (see module doc). ``opening`` is each layer's header+separator cost."""
    chosen: dict[Layer, list[_Cand]] = {layer: [] for layer in RENDER_ORDER}
    used_total = 0.0
    rest: list[_Cand] = []
    for layer in RENDER_ORDER:
        cap, used, cands = shares[layer] * budget, 0, prepared[layer]
        limit = limits.get(layer)
        i = 0
        while i < len(cands) and (limit is None or i < limit):
            cost = _costed(cands[i], count) + (opening[layer] if i == 0 else 0)
            if used + cost > cap:
                break
            used += cost
            i += 1
            if trace is not None:
                trace.note(layer, cands[i - 1].item, Decision.RESERVED, cost)
        chosen[layer] = cands[:i]
        if trace is not None:
            trace.budgets[layer].share_tokens, trace.budgets[layer].reserved_used = cap, used
        used_total += used
        rest.extend(cands[i:])
    pool = budget - used_total
    rest.sort(key=attrgetter("key"))
    for c in rest:
        bucket = chosen[c.layer]
        limit = limits.get(c.layer)
        if limit is not None and len(bucket) >= limit:
            if trace is not None:
                trace.note(c.layer, c.item, Decision.LAYER_LIMIT)
            continue
        cost = _costed(c, count) + (0 if bucket else opening[c.layer])
        if trace is not None:
            trace.note(c.layer, c.item, Decision.OVERFLOW if cost <= pool else Decision.NO_ROOM, cost, pool)
        if cost <= pool:
            bucket.append(c)
            pool -= cost
    return chosen


def pack(
    candidates: Mapping[Layer, Iterable[PackItem]],
    *,
    max_tokens: int,
    count: TokenCount,
    shares: Mapping[Layer, float] | Mapping[str, float] | None = None,
    limits: Mapping[Layer, int] | Mapping[str, int] | None = None,
    min_score: float | None = None,
    trace: PackTrace | None = None,
    distinct: bool = False,
) -> PackResult:
    """Choose and render items so that ``count(result.text) <= max_tokens`` always holds.

    ``count`` must be the exact counter of the pack's encoding; ``limits`` caps items per layer;
    ``min_score`` drops scored-layer candidates below it; ``distinct`` serves a scored-layer line
    said more than once only once (:func:`_serve_once`). Same
    inputs → same bytes. ``trace``, when given, records every decision (see
    :mod:`elephantasm.domain.pack_trace`); it changes nothing.
    """
    if max_tokens < 0:
        raise ValidationError("max_tokens must be >= 0")
    share_map = normalise_shares(shares)
    limit_map = {Layer(k): max(0, int(v)) for k, v in (limits or {}).items()}
    prepared = _prepare(candidates, min_score, trace, distinct)
    sep = count(LAYER_SEPARATOR)
    opening = {layer: count(header_line(layer)) + sep for layer in RENDER_ORDER}
    # Every block is charged a separator, but n blocks only have n-1 of them: credit one back.
    chosen = _select(prepared, count, max_tokens + sep, share_map, limit_map, opening, trace)
    return _finalise(chosen, max_tokens, count, trace)


def rendered_tokens(blocks: Sequence[tuple[int, Sequence[int], str]], count: TokenCount) -> tuple[int, list[int]]:
    """Exact token counts of :func:`~elephantasm.domain.render.render_lines`' text and of each block,
    from counts already known, without encoding the text again.

    ``blocks``: per non-empty layer in render order, its header's count, its lines' counts, and its
    last line. Why the sum is exact: tiktoken splits text into pieces with its encoding's regex and
    encodes each piece on its own, and no piece of any supported pattern runs from a newline into
    a following non-whitespace character (a piece holding a newline ends at the last newline of its
    run). Every line and header starts with a non-whitespace character (``- ``, ``## ``) right after
    a newline, so each is where a piece starts, and the text's count is the sum of its lines' and
    headers' counts, except where text differs from those lines: the separator after a block's
    last line (``…\n\n`` can be one piece) and the final line's stripped newline, counted here.
    A block's own count (``header + lines``) is exactly its header's plus its lines'.
    """
    total, per_block = 0, []
    for i, (header, costs, last) in enumerate(blocks):
        block = header + sum(costs)
        per_block.append(block)
        tail = last + LAYER_SEPARATOR if i < len(blocks) - 1 else last.rstrip("\n")
        total += block - costs[-1] + count(tail)
    return total, per_block


def _count_chosen(chosen: dict[Layer, list[_Cand]], count: TokenCount) -> tuple[int, dict[Layer, int]]:
    """Exact count of the text the chosen candidates render to, and of each block: summed by
    :func:`rendered_tokens` when ``count`` declares it splits at line starts (tiktoken's counter,
    ``elephantasm.tokens.TokenCounter.splits_at_line_starts``), else by encoding them."""
    layers = [layer for layer in RENDER_ORDER if chosen.get(layer)]
    if not getattr(count, "splits_at_line_starts", False):
        lines = {layer: [c.line for c in chosen[layer]] for layer in layers}
        per_layer = {layer: count(header_line(layer) + "".join(lines[layer])) for layer in layers}
        return count(render_lines(lines)), per_layer
    blocks = [(count(header_line(layer)), [c.cost for c in chosen[layer]], chosen[layer][-1].line) for layer in layers]
    total, per_block = rendered_tokens(blocks, count)
    return total, dict(zip(layers, per_block, strict=True))


def _finalise(
    chosen: dict[Layer, list[_Cand]], max_tokens: int, count: TokenCount, trace: PackTrace | None = None
) -> PackResult:
    """Render, count exactly, and drop lowest-ranked items while over budget."""
    for layer, cands in chosen.items():
        key = display_key(layer)
        cands.sort(key=lambda c: key(c.item))
    tokens, per_layer = _count_chosen(chosen, count)
    trimmed = 0
    while tokens > max_tokens and any(chosen.values()):
        victim = max((c for cands in chosen.values() for c in cands), key=attrgetter("key"))
        chosen[victim.layer].remove(victim)
        if trace is not None:
            trace.trimmed(victim.layer, victim.item)
        tokens, per_layer = _count_chosen(chosen, count)
        trimmed += 1
    text = render_lines({layer: [c.line for c in cands] for layer, cands in chosen.items()})
    layers = {layer: tuple(c.item for c in cands) for layer, cands in chosen.items()}
    return PackResult(
        layers=layers,
        text=text,
        token_count=tokens,
        max_tokens=max_tokens,
        trimmed=trimmed,
        layer_tokens=per_layer,
        echoes={(c.layer, c.item.id): tuple(c.echoes) for cands in chosen.values() for c in cands if c.echoes},
    )
