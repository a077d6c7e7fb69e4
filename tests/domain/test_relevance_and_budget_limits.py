"""In-compile relevance normalisation and budget-scaled item limits."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from elephantasm.domain.presets import (
    QUERY_CANDIDATE_FAST_UNTIL_TOKENS,
    QUERY_CANDIDATE_TOKENS_PER_ITEM,
    QUERY_TOKENS_PER_ITEM,
    TOKENS_PER_ITEM,
    budget_limits,
    candidate_limits,
    compile_weights,
    get_preset,
    resolve_config,
)
from elephantasm.domain.scoring import contextual_relevance, fuse_relevance

_signal = st.one_of(st.none(), st.floats(min_value=-1.0, max_value=1.0))
_rank = st.one_of(st.none(), st.floats(min_value=0.0, max_value=2.0))


def test_narrow_cosine_band_is_spread_over_zero_to_one() -> None:
    # A weak embedder bunches cosines in 0.20–0.35; within the set they must still discriminate.
    out = contextual_relevance([(0.20, 0.0), (0.35, 0.3), (0.275, 0.0)])
    assert out[1] == 1.0 and out[0] == 0.0
    assert out[0] < out[2] < out[1]


def test_lexical_match_still_counts_beside_cosine() -> None:
    # The cosine weighs most, but a text match lifts a candidate over a slightly closer vector...
    out = contextual_relevance([(0.33, 0.2), (0.34, 0.0), (0.20, 0.0)])
    assert out[0] > out[1] > out[2]
    # ...and not over a clearly closer one.
    out = contextual_relevance([(0.22, 0.2), (0.34, 0.0), (0.20, 0.0)])
    assert out[1] > out[0] > out[2]


def test_near_equal_candidates_are_not_stretched_apart() -> None:
    # Three texts all about the query, cosines within 0.03: none is pushed to 0.
    out = contextual_relevance([(0.766, 0.1), (0.744, 0.1), (0.738, 0.12)])
    assert min(out) > 0.7 and out[0] == max(out[:2])


def test_no_discrimination_falls_back_to_fusion() -> None:
    assert contextual_relevance([(0.3, 0.1), (0.3, 0.1)]) == [fuse_relevance(0.3, 0.1)] * 2
    assert contextual_relevance([(None, None)]) == [None]
    assert contextual_relevance([]) == []


@given(st.lists(st.tuples(_signal, _rank), max_size=30), st.randoms(use_true_random=False))
def test_bounded_and_order_independent(signals, rnd) -> None:
    out = contextual_relevance(signals)
    assert all(v is None or 0.0 <= v <= 1.0 for v in out)
    order = list(range(len(signals)))
    rnd.shuffle(order)
    shuffled = contextual_relevance([signals[i] for i in order])
    assert [shuffled[order.index(i)] for i in range(len(signals))] == out


def test_preset_limits_grow_with_budget_but_explicit_limits_are_hard_caps() -> None:
    cfg = get_preset("conversational")
    assert budget_limits(cfg, 500) == cfg.limits
    big = budget_limits(cfg, 4000)
    n = 4000 // TOKENS_PER_ITEM
    assert (big.long_term, big.knowledge, big.session) == (n, n, n)
    assert big.recent_turns == cfg.limits.recent_turns
    explicit = resolve_config("conversational", {"limits": {"long_term": 1}})
    assert budget_limits(explicit, 4000) == explicit.limits
    off = resolve_config("recent", {"limits": {"knowledge": 0}})
    assert budget_limits(off, 4000).knowledge == 0


def test_with_a_query_limits_grow_one_item_per_short_line_so_big_budgets_fill() -> None:
    cfg = get_preset("conversational")
    with_query = budget_limits(cfg, 4000, has_query=True)
    n = 4000 // QUERY_TOKENS_PER_ITEM
    assert (with_query.long_term, with_query.knowledge, with_query.session) == (n, n, n)
    assert with_query.long_term > budget_limits(cfg, 4000).long_term
    explicit = resolve_config("conversational", {"limits": {"long_term": 1}})
    assert budget_limits(explicit, 4000, has_query=True) == explicit.limits
    # Candidate arms grow more slowly than what the packer may take.
    fetch = candidate_limits(cfg, 4000, has_query=True)
    assert fetch.long_term == 4000 // QUERY_CANDIDATE_TOKENS_PER_ITEM < with_query.long_term
    assert (fetch.knowledge, fetch.session) == (budget_limits(cfg, 4000).knowledge, budget_limits(cfg, 4000).session)
    assert candidate_limits(cfg, 4000) == budget_limits(cfg, 4000)


def test_small_queried_budgets_fetch_deeper_arms_and_large_ones_what_they_did() -> None:
    cfg = get_preset("conversational")
    arms = {n: candidate_limits(cfg, n, has_query=True).long_term for n in (250, 500, 1000, 2000, 4000)}
    assert arms[500] == 1000 // QUERY_CANDIDATE_TOKENS_PER_ITEM  # twice as deep as one per 32 tokens
    assert arms[1000] == arms[2000] == QUERY_CANDIDATE_FAST_UNTIL_TOKENS // QUERY_CANDIDATE_TOKENS_PER_ITEM
    assert arms[4000] == 4000 // QUERY_CANDIDATE_TOKENS_PER_ITEM
    assert arms[250] == cfg.limits.long_term  # the preset's floor
    explicit = resolve_config("conversational", {"limits": {"long_term": 7}})
    assert candidate_limits(explicit, 500, has_query=True).long_term == 7  # explicit caps stay hard


@given(
    st.sampled_from(["conversational", "self_determined", "recent", "important"]),
    st.integers(0, 100_000),
    st.booleans(),
)
def test_budget_limits_never_shrink(name, max_tokens, has_query) -> None:
    cfg = get_preset(name)
    got = budget_limits(cfg, max_tokens, has_query).as_mapping()
    for layer, limit in cfg.limits.as_mapping().items():
        assert got[layer] >= limit


def test_a_question_not_about_time_ranks_by_relevance_not_recency() -> None:
    cfg = get_preset("conversational")
    fact = compile_weights(cfg, "which cuisine does the user like?")
    assert (fact.recency, fact.decay) == (0.0, 0.0)
    assert fact.relevance == cfg.weights.relevance and fact.importance == cfg.weights.importance
    for temporal in ("what did we discuss recently?", "where does the user live now?"):
        assert compile_weights(cfg, temporal) == cfg.weights
    assert compile_weights(cfg, None) == cfg.weights  # no query: the four factors as they are
    explicit = resolve_config("conversational", {"weights": {"recency": 0.9}})
    assert compile_weights(explicit, "which cuisine?") == explicit.weights
