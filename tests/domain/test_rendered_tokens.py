"""The packer's exact count of a rendered pack, summed from its lines' counts (packing.rendered_tokens).

It must equal encoding the rendered text (and each block) with tiktoken, for every supported
encoding and any line content: the pack's ``token_count`` and ``layer_tokens`` are served as exact.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from elephantasm.domain.packing import pack, rendered_tokens
from elephantasm.domain.render import RENDER_ORDER, Layer, PackItem, header_line, item_line, render_lines
from elephantasm.tokens import SUPPORTED_ENCODINGS, TokenCounter

COUNTERS = {name: TokenCounter(name) for name in SUPPORTED_ENCODINGS}
T0 = datetime(2025, 1, 1, tzinfo=UTC)
# Endings and starts that BPE pre-tokenizers treat specially next to a newline: punctuation runs
# (which take trailing newlines into their piece), contractions, digits, slashes, CJK, emoji.
PIECES = [
    "ok.",
    "end!!",
    "it's",
    "we'll",
    "2026",
    "12345",
    "a/b/",
    "—",
    "数据",
    "🙂",
    ")",
    "...",
    "x",
    "'s",
    "\r",
    "\t",
]
line_texts = st.one_of(
    st.lists(st.sampled_from(PIECES), min_size=1, max_size=8).map(" ".join),
    st.text(min_size=1, max_size=40),
)


@st.composite
def chosen_lines(draw: st.DrawFn) -> dict[Layer, list[str]]:
    out: dict[Layer, list[str]] = {}
    for layer in RENDER_ORDER:
        texts = draw(st.lists(line_texts, max_size=4))
        items = [
            PackItem(
                f"{layer}:{i}", t, time=T0 + timedelta(hours=i), label=draw(st.sampled_from([None, "fact", "a.b."]))
            )
            for i, t in enumerate(texts)
            if t.strip()
        ]
        out[layer] = [item_line(layer, it) for it in items]
    return out


@settings(max_examples=300, deadline=None)
@given(lines=chosen_lines(), encoding=st.sampled_from(SUPPORTED_ENCODINGS))
def test_summed_count_equals_encoding_the_text(lines: dict[Layer, list[str]], encoding: str) -> None:
    count = COUNTERS[encoding]
    layers = [layer for layer in RENDER_ORDER if lines[layer]]
    blocks = [(count(header_line(layer)), [count(line) for line in lines[layer]], lines[layer][-1]) for layer in layers]
    total, per_block = rendered_tokens(blocks, count)
    assert total == count._count(render_lines(lines))  # the unmemoised encoder, on the whole text
    assert per_block == [count._count(header_line(layer) + "".join(lines[layer])) for layer in layers]


@pytest.mark.parametrize("encoding", SUPPORTED_ENCODINGS)
def test_a_line_ending_in_punctuation_before_the_separator(encoding: str) -> None:
    """``….\\n`` + the blank separator line is one piece (``.\\n\\n``): the sum must not count it as two."""
    count = COUNTERS[encoding]
    lines = {Layer.KNOWLEDGE: ["- It is done.\n"], Layer.LONG_TERM: ["- (2025-01-01) we met!\n", "- ok\n"]}
    text = render_lines(lines)
    assert count._count("- It is done.\n\n") != count("- It is done.\n") + count("\n")  # why the tail is recounted
    blocks = [(count(header_line(layer)), [count(x) for x in ls], ls[-1]) for layer, ls in lines.items()]
    assert rendered_tokens(blocks, count)[0] == count._count(text)


@pytest.mark.parametrize("encoding", SUPPORTED_ENCODINGS)
def test_pack_serves_exact_totals_and_layer_counts(encoding: str) -> None:
    count = COUNTERS[encoding]
    cands = {
        layer: [PackItem(f"{layer}-{i}", f"note {i} about things!! it's {i * 7}.", score=1 - i / 50) for i in range(30)]
        for layer in (Layer.KNOWLEDGE, Layer.LONG_TERM, Layer.SESSION)
    }
    for max_tokens in (40, 300, 1500):
        res = pack(cands, max_tokens=max_tokens, count=count, distinct=True)
        assert res.token_count == count._count(res.text) <= max_tokens
        blocks = {
            layer: header_line(layer) + "".join(item_line(layer, it) for it in res.items(layer)) for layer in cands
        }
        assert dict(res.layer_tokens) == {layer: count._count(b) for layer, b in blocks.items() if res.items(layer)}
