"""Prefix-stable rendering of a chat pack: items of a layer in the order they were first made,
and the identity block last.

A pack renders each layer in rank order (score first), which is right for a text prompt but moves
lines whenever a score changes, and every line after the first moved one is a new KV prefix. The
chat prompt keeps the same lines (selection is still by score) but lists them oldest first by
their time-ordered ids, so a dream that adds memories adds lines at a layer's end, and the lines
before them, with their cached KV, stay where they were. The identity block goes last: measured
over daily dreams it is the block that changes first (an anima's personality and style lines
appear once the dreamer has seen enough), and at the top every such change was a full miss.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from elephantasm.domain.render import LAYER_SEPARATOR, Layer, header_line

VOLATILE_LAST = (Layer.IDENTITY,)

_BLOCKS = "\n" + LAYER_SEPARATOR
_ITEM = "- "


def oldest_first(context: str, ids: Mapping[Layer, Sequence[str]]) -> str:
    """``context`` (a rendered pack) with the item lines of each layer in ``ids`` sorted by the id
    of their item; ``ids[layer]`` lists the block's items in the order the block renders them.

    A block whose line count does not match its ids is left as it is (never guess which line is
    whose). Ids are time-ordered (UUID v7), so their text order is the order the items were made.
    """
    blocks = context.split(_BLOCKS)
    for i, block in enumerate(blocks):
        for layer, layer_ids in ids.items():
            header = header_line(layer)
            if not block.startswith(header):
                continue
            lines = block[len(header) :].split("\n")
            if len(lines) == len(layer_ids) and all(line.startswith(_ITEM) for line in lines):
                ordered = sorted(zip(layer_ids, lines, strict=True))
                blocks[i] = header + "\n".join(line for _, line in ordered)
    return _BLOCKS.join(volatile_last(blocks))


def volatile_last(blocks: list[str]) -> list[str]:
    """The blocks with those of :data:`VOLATILE_LAST` moved to the end (others keep their order)."""
    headers = tuple(header_line(layer) for layer in VOLATILE_LAST)
    return [b for b in blocks if not b.startswith(headers)] + [b for b in blocks if b.startswith(headers)]
