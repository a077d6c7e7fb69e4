"""The pack composer: compile a pack exactly as ``inject`` would, and explain every decision.

The caller compiles the pack as ``GET …/memory-packs/latest`` does (same request → same bytes, so
``context`` is exactly what the SDK's ``as_prompt()`` returns) with the packer's optional trace
attached, and :func:`compose` explains it. Nothing is cached, recorded or counted as a recall: looking at a pack
must not change the anima's memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from elephantasm.domain.pack_trace import Filtered, PackTrace, TracedItem
from elephantasm.domain.presets import budget_limits
from elephantasm.domain.render import RENDER_ORDER, display_key, global_rank_key
from elephantasm.schemas.packs import MemoryPackRead
from elephantasm.services.packs.keys import PackRequest


@dataclass(frozen=True, slots=True)
class LayerUse:
    """One layer's budget: its share in round 1, what it used, its item cap, what it holds, what
    the packer cut and what was filtered out before packing (low relevance)."""

    layer: str
    share_tokens: int
    reserved_used: int
    tokens: int
    items: int
    limit: int | None
    cut: int
    filtered: int


@dataclass(frozen=True, slots=True)
class Composition:
    """A compiled pack with the packer's trace and per-layer budget use."""

    pack: MemoryPackRead
    trace: PackTrace
    layers: list[LayerUse]

    def chosen_by_layer(self) -> dict[str, list[dict[str, Any]]]:
        """Chosen items per layer, in the order the prompt shows them (see :func:`describe`)."""
        out: dict[str, list[dict[str, Any]]] = {}
        for layer in RENDER_ORDER:
            chosen = sorted(
                (t for t in self.trace.chosen() if t.layer is layer), key=lambda t: display_key(layer)(t.item)
            )
            if chosen:
                out[layer.value] = [describe(t) for t in chosen]
        return out

    def cut(self) -> list[dict[str, Any]]:
        """Candidates left out, best-ranked first (see :func:`describe`)."""
        return [describe(t) for t in sorted(self.trace.cut(), key=lambda t: global_rank_key(t.layer, t.item))]

    def filtered(self) -> list[Filtered]:
        """Candidates dropped before packing for low relevance, most relevant first."""
        return sorted(self.trace.filtered, key=lambda f: -f.relevance)


def compose(req: PackRequest, pack: MemoryPackRead, trace: PackTrace) -> Composition:
    """The composition of ``pack``, compiled for ``req`` with ``trace``."""
    limits = budget_limits(req.config, req.max_tokens, req.query is not None).as_mapping()
    layers = []
    for layer in RENDER_ORDER:
        budget = trace.budgets[layer]
        traced = [t for t in trace.items if t.layer is layer]
        layers.append(
            LayerUse(
                layer=layer.value,
                share_tokens=int(budget.share_tokens),
                reserved_used=budget.reserved_used,
                tokens=pack.layer_tokens.get(layer.value, 0),
                items=sum(t.chosen for t in traced),
                limit=limits.get(layer),
                cut=sum(not t.chosen for t in traced),
                filtered=sum(f.layer is layer for f in trace.filtered),
            )
        )
    return Composition(pack, trace, layers)


def describe(traced: TracedItem) -> dict[str, Any]:
    """A traced candidate as display data: kind, text, score and factors (when scored), decision."""
    ref = traced.item.ref
    candidate, scored = ref if isinstance(ref, tuple) else (None, None)
    return {
        "layer": traced.layer.value,
        "id": traced.item.id,
        "kind": candidate.kind if candidate else traced.layer.value,
        "text": traced.item.text,
        "score": traced.item.score,
        "breakdown": scored.breakdown.as_dict() if scored else None,
        "provenance": [str(p) for p in candidate.provenance] if candidate else [],
        "decision": traced.decision.value,
        "why": traced.why,
        "cost": traced.cost,
    }
