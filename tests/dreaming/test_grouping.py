"""Grouping events into exchanges: within a session, a few turns, bounded in tokens, deterministic."""

from __future__ import annotations

import random
from datetime import timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from elephantasm.domain.dreaming import GroupingConfig, approx_tokens, group_events
from elephantasm.domain.dreaming.batching import BatchLimits, batch_groups
from tests.dreaming.factories import conversation, ev


def test_long_session_is_cut_into_exchanges_not_one_group() -> None:
    events = conversation([f"turn {i}" for i in range(40)])
    groups = group_events(events)
    assert len(groups) >= 5
    assert all(len(g) <= GroupingConfig().max_turns for g in groups)
    assert [e for g in groups for e in g] == events


def test_cuts_prefer_a_new_user_turn() -> None:
    groups = group_events(conversation([f"turn {i}" for i in range(12)]))
    # soft_turns=4: every exchange after the first starts with the user speaking.
    assert all(g[0].event_type == "message.in" for g in groups)
    assert [len(g) for g in groups] == [4, 4, 4]


def test_sessions_are_never_mixed_and_groups_are_ordered_by_time() -> None:
    a = [ev(i, f"a{i}", session="A", minutes=2 * i) for i in range(6)]
    b = [ev(10 + i, f"b{i}", session="B", minutes=2 * i + 1) for i in range(6)]
    groups = group_events(a + b)
    assert all(len({e.session_id for e in g}) == 1 for g in groups)
    starts = [(g[0].occurred_at, g[0].id) for g in groups]
    assert starts == sorted(starts)


def test_time_gap_splits_events_without_a_session() -> None:
    events = [
        ev(0, "hi", session=None),
        ev(1, "hello", session=None, minutes=1),
        ev(2, "back again", session=None, minutes=300),
        ev(3, "welcome back", session=None, minutes=301),
    ]
    groups = group_events(events, config=GroupingConfig(gap=timedelta(minutes=30)))
    assert [[e.index for e in g] for g in groups] == [[0, 1], [2, 3]]


def test_token_bound_and_oversized_event_kept_alone() -> None:
    events = conversation(["word " * 100, "word " * 100, "x" * 20_000, "short", "short"])
    groups = group_events(events, approx_tokens, GroupingConfig(max_tokens=300))
    for g in groups:
        assert len(g) == 1 or sum(approx_tokens(e.content) for e in g) <= 300
    assert sorted(e.index for g in groups for e in g) == [0, 1, 2, 3, 4]
    assert any(len(g) == 1 and g[0].index == 2 for g in groups)


def test_uses_the_token_counter_it_is_given() -> None:
    calls: list[str] = []

    def counter(text: str) -> int:
        calls.append(text)
        return 1000

    groups = group_events(conversation(["a", "b", "c"]), counter, GroupingConfig(max_tokens=1500))
    assert calls and [len(g) for g in groups] == [1, 1, 1]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 500), st.sampled_from(["A", "B", None]), st.integers(0, 400)), min_size=1, max_size=60
    ),
    st.randoms(use_true_random=False),
)
def test_partition_is_complete_and_independent_of_input_order(spec, rnd: random.Random) -> None:
    events = [ev(i, "w " * size, minutes=minute, session=session) for i, (minute, session, size) in enumerate(spec)]
    groups = group_events(events)
    flat = [e.id for g in groups for e in g]
    assert sorted(flat) == sorted(e.id for e in events) and len(set(flat)) == len(flat)
    shuffled = events[:]
    rnd.shuffle(shuffled)
    assert group_events(shuffled) == groups
    for g in groups:
        assert len({e.session_id for e in g}) == 1 and len(g) <= GroupingConfig().max_turns


def test_batches_pack_whole_groups_within_limits() -> None:
    groups = group_events(conversation([f"message {i} " * 5 for i in range(100)]))
    batches = batch_groups(groups, approx_tokens, BatchLimits(max_events=40, max_tokens=6000))
    assert len(batches) <= 3
    assert all(len(b) <= 40 for b in batches)
    assert [e for b in batches for e in b] == [e for g in groups for e in g]
