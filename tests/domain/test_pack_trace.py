"""The packer's optional trace: it changes nothing, and it accounts for every candidate exactly once."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from elephantasm.domain.pack_trace import Decision, PackTrace
from elephantasm.domain.packing import pack
from elephantasm.domain.render import Layer, PackItem
from tests.domain.test_packing_properties import (
    COUNTERS,
    PROPS,
    budgets,
    candidate_sets,
    limit_maps,
    share_maps,
)


@PROPS
@given(
    candidate_sets(),
    budgets,
    share_maps,
    limit_maps,
    st.sampled_from(sorted(COUNTERS)),
    st.sampled_from([None, 0.3, 0.6]),
)
def test_trace_changes_nothing_and_explains_every_candidate(  # type: ignore[no-untyped-def]
    cands, max_tokens, shares, limits, counter_name, min_score
) -> None:
    count = COUNTERS[counter_name]
    plain = pack(cands, max_tokens=max_tokens, count=count, shares=shares, limits=limits, min_score=min_score)
    trace = PackTrace()
    traced = pack(
        cands, max_tokens=max_tokens, count=count, shares=shares, limits=limits, min_score=min_score, trace=trace
    )
    assert traced.text.encode() == plain.text.encode() and traced.layers == plain.layers
    # one entry per candidate given, and "chosen" in the trace is exactly what the pack holds
    assert len(trace.items) == sum(len(v) for v in cands.values())
    assert {(t.layer, t.item.id) for t in trace.chosen()} == {
        (layer, it.id) for layer, items in plain.layers.items() for it in items
    }
    assert len(trace.chosen()) == sum(len(v) for v in plain.layers.values())
    for t in trace.cut():
        assert t.why.startswith("cut")
        if t.decision is Decision.NO_ROOM:
            assert t.cost is not None and t.room is not None and t.cost > t.room
        if t.decision is Decision.BELOW_MIN_SCORE:
            assert min_score is not None and t.item.score < min_score
        if t.decision is Decision.LAYER_LIMIT:
            assert limits is not None  # (the layer was full when its turn came; a trim may free a slot later)
    reserved = sum(t.cost or 0 for t in trace.items if t.decision is Decision.RESERVED)
    budgeted = sum(b.reserved_used for b in trace.budgets.values())
    # A reserved item that the exact final count trims is reported as trimmed, but its tokens were
    # reserved: equality holds unless something was trimmed.
    trimmed = [t for t in trace.items if t.decision is Decision.TRIMMED]
    assert reserved <= budgeted and (reserved == budgeted or trimmed)


def test_budget_cut_names_the_tokens_needed_and_left() -> None:
    big = PackItem("big", "word " * 200, score=0.9)
    small = PackItem("small", "tea", score=0.1)
    trace = PackTrace()
    result = pack(
        {Layer.LONG_TERM: [big, small]},
        max_tokens=40,
        count=COUNTERS["o200k"],
        shares={Layer.LONG_TERM: 1.0},
        trace=trace,
    )
    assert [it.id for it in result.items(Layer.LONG_TERM)] == ["small"]
    (cut,) = trace.cut()
    assert cut.item.id == "big" and cut.decision is Decision.NO_ROOM
    assert f"needs {cut.cost}" in cut.why and cut.cost is not None and cut.cost > 40
    (kept,) = trace.chosen()
    assert kept.decision is Decision.OVERFLOW  # round 1 takes a prefix: the big item blocked it


def test_duplicates_empty_and_min_score_are_named() -> None:
    items = [
        PackItem("a", "alpha", score=0.9),
        PackItem("a", "alpha again", score=0.5),
        PackItem("b", "   ", score=0.8),
        PackItem("c", "gamma", score=0.05),
    ]
    trace = PackTrace()
    pack({Layer.KNOWLEDGE: items}, max_tokens=500, count=COUNTERS["o200k"], min_score=0.1, trace=trace)
    by_decision = {t.decision: t.item.text for t in trace.items}
    assert by_decision == {
        Decision.RESERVED: "alpha",
        Decision.DUPLICATE: "alpha again",
        Decision.EMPTY: "   ",
        Decision.BELOW_MIN_SCORE: "gamma",
    }
