"""``layer_lines`` reads back, per layer, exactly the item lines ``render_pack`` wrote."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from elephantasm.domain.render import RENDER_ORDER, Layer, PackItem, display_key, item_line, layer_lines
from tests.domain.rendering import render_pack

_TEXT = st.text(min_size=1, max_size=60).filter(lambda t: t.split())
_WHEN = st.none() | st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC))
_ITEMS = st.lists(
    st.builds(PackItem, st.uuids().map(str), _TEXT, score=st.floats(0, 1), time=_WHEN, label=st.none() | _TEXT),
    max_size=5,
    unique_by=lambda it: it.id,
)


@given(st.fixed_dictionaries({layer: _ITEMS for layer in RENDER_ORDER}))
def test_layer_lines_inverts_rendering(layers: dict[Layer, list[PackItem]]) -> None:
    text = render_pack(layers)
    for layer in RENDER_ORDER:
        shown = sorted(layers[layer], key=display_key(layer))
        assert layer_lines(text, layer) == [item_line(layer, it)[2:-1] for it in shown]


def test_layer_lines_without_the_block_is_empty() -> None:
    text = render_pack({Layer.KNOWLEDGE: [PackItem("k", "User likes tea.", score=1.0, label="FACT")]})
    assert layer_lines(text, Layer.KNOWLEDGE) == ["[FACT] User likes tea."]
    assert layer_lines(text, Layer.LONG_TERM) == []
