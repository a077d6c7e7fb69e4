"""Rendering chosen items without the packer (a test-side twin of what ``pack()`` renders)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from elephantasm.domain.render import RENDER_ORDER, Layer, PackItem, display_key, item_line, render_lines


def render_pack(layers: Mapping[Layer, Iterable[PackItem]]) -> str:
    """The full prompt text for chosen items per layer (see ``render_lines``), items re-sorted by
    ``display_key`` so input order does not matter."""
    return render_lines(
        {
            layer: [item_line(layer, it) for it in sorted(layers.get(layer, ()), key=display_key(layer))]
            for layer in RENDER_ORDER
        }
    )
