"""An optional record of the packer's decisions: why each candidate was taken or cut.

``pack(..., trace=PackTrace())`` fills it as it goes; the packer makes the same choices (same bytes)
with or without one. The inspector's pack composer shows it, so "why is this memory
not in my prompt?" has an answer: its layer was full, it did not fit the tokens left, it scored
below ``min_score``, or the exact count trimmed it. Pure data, no I/O.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from enum import StrEnum

from elephantasm.domain.render import RENDER_ORDER, Layer, PackItem


class Decision(StrEnum):
    """What the packer did with one candidate."""

    RESERVED = "reserved"  # taken inside its layer's own share (round 1)
    OVERFLOW = "overflow"  # taken from the pool of unused shares (round 2)
    EMPTY = "empty"  # no text to render
    DUPLICATE = "duplicate"  # same id as, or restating, a better-ranked candidate of the layer
    BELOW_MIN_SCORE = "below_min_score"
    LAYER_LIMIT = "layer_limit"  # the layer already holds its maximum number of items
    NO_ROOM = "no_room"  # its line cost more tokens than were left when its turn came
    TRIMMED = "trimmed"  # taken, then dropped because the exact count of the text was over budget


CHOSEN = frozenset({Decision.RESERVED, Decision.OVERFLOW})

_EXPLAIN = {
    Decision.RESERVED: "taken within the layer's share of the budget",
    Decision.OVERFLOW: "taken from tokens other layers left unused",
    Decision.EMPTY: "cut: no text",
    Decision.DUPLICATE: "cut: duplicate of a better-ranked item",
    Decision.BELOW_MIN_SCORE: "cut: score below the preset's min_score",
    Decision.LAYER_LIMIT: "cut: the layer already holds its maximum number of items",
    Decision.NO_ROOM: "cut by the budget: its line needs more tokens than were left",
    Decision.TRIMMED: "cut by the budget: dropped when the exact token count came out over max_tokens",
}


@dataclass(slots=True)
class TracedItem:
    """One candidate and the decision about it.

    ``cost`` is what taking it would have charged (its line, plus the layer's header and separator
    when it would open the layer); ``room`` the tokens left at that moment (for budget cuts).
    """

    layer: Layer
    item: PackItem
    decision: Decision
    cost: int | None = None
    room: float | None = None

    @property
    def chosen(self) -> bool:
        """Whether the item is in the pack."""
        return self.decision in CHOSEN

    @property
    def why(self) -> str:
        """A sentence saying why, with the token figures when the budget decided."""
        text = _EXPLAIN[self.decision]
        if self.decision is Decision.NO_ROOM and self.cost is not None and self.room is not None:
            return f"{text} (needs {self.cost}, {max(0, int(self.room))} left)"
        return text


@dataclass(frozen=True, slots=True)
class Filtered:
    """A candidate left out before packing: with a query, its relevance was below its layer's floor."""

    layer: Layer
    kind: str
    id: uuid.UUID
    text: str
    relevance: float
    floor: float

    @property
    def why(self) -> str:
        """A sentence saying why."""
        return f"filtered out: relevance {self.relevance:.2f} to the query is below the floor {self.floor:.2f}"


@dataclass(slots=True)
class LayerBudget:
    """A layer's share of the budget in round 1 and the tokens it used there."""

    share_tokens: float = 0.0
    reserved_used: int = 0


@dataclass(slots=True)
class PackTrace:
    """Every decision of one ``pack()`` call, in the order the packer made them."""

    items: list[TracedItem] = field(default_factory=list)
    filtered: list[Filtered] = field(default_factory=list)
    """Candidates dropped before packing (never offered to the packer)."""
    budgets: dict[Layer, LayerBudget] = field(default_factory=lambda: {layer: LayerBudget() for layer in RENDER_ORDER})

    def note(
        self, layer: Layer, item: PackItem, decision: Decision, cost: int | None = None, room: float | None = None
    ) -> None:
        """Record a decision about ``item``."""
        self.items.append(TracedItem(layer, item, decision, cost, room))

    def trimmed(self, layer: Layer, item: PackItem) -> None:
        """Turn an earlier "taken" into "trimmed" (the exact count dropped it)."""
        for traced in self.items:
            if traced.layer is layer and traced.item is item and traced.chosen:
                traced.decision = Decision.TRIMMED
                return

    def chosen(self) -> list[TracedItem]:
        """Items in the pack."""
        return [t for t in self.items if t.chosen]

    def cut(self) -> list[TracedItem]:
        """Candidates left out, in the order the packer considered them."""
        return [t for t in self.items if not t.chosen]
