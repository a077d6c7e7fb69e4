"""Curation rules: decay, state transitions with reactivation, merge planning, per-run caps."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from elephantasm.domain.dreaming import (
    CurationThresholds,
    MemoryStats,
    MergeCandidate,
    memory_decay,
    next_state,
    normalise_text,
    plan_merges,
    plan_transitions,
)

NOW = datetime(2024, 6, 1, tzinfo=UTC)
TH = CurationThresholds()


def stats(
    id_: str = "m",
    *,
    state: str = "active",
    importance: float = 0.2,
    recalls: int = 0,
    age_days: float = 0,
    recalled_days_ago: float | None = None,
    state_days_ago: float | None = None,
    best_match: float | None = None,
) -> MemoryStats:
    return MemoryStats(
        id=id_,
        state=state,
        importance=importance,
        recall_count=recalls,
        created_at=NOW - timedelta(days=age_days),
        last_recalled_at=None if recalled_days_ago is None else NOW - timedelta(days=recalled_days_ago),
        state_since=None if state_days_ago is None else NOW - timedelta(days=state_days_ago),
        best_match=best_match,
    )


def test_decay_follows_half_life_and_recalls_slow_it() -> None:
    assert memory_decay(stats(age_days=0), NOW, TH) == 0.0
    assert math.isclose(memory_decay(stats(age_days=TH.half_life_days), NOW, TH), 0.5)
    assert memory_decay(stats(age_days=60, recalls=3), NOW, TH) < memory_decay(stats(age_days=60), NOW, TH)
    assert memory_decay(stats(age_days=60, recalled_days_ago=1), NOW, TH) < 0.1


def test_active_fades_to_decaying_then_archived_one_step_at_a_time() -> None:
    old = stats(age_days=200)
    step = next_state(old, NOW, TH)
    assert step is not None and (step.from_state, step.to_state) == ("active", "decaying")
    step = next_state(stats(state="decaying", age_days=200), NOW, TH)
    assert step is not None and step.to_state == "archived"
    assert next_state(stats(state="archived", age_days=400), NOW, TH) is None


def test_young_or_important_memories_stay_active() -> None:
    assert next_state(stats(age_days=0.5, importance=0.0), NOW, CurationThresholds(half_life_days=0.01)) is None
    assert next_state(stats(age_days=20), NOW, TH) is None
    assert next_state(stats(age_days=2000, importance=1.0), NOW, TH) is None

    def days_to_archive(importance: float) -> int:
        for day in range(1, 2000):
            step = next_state(stats(state="decaying", age_days=day, importance=importance), NOW, TH)
            if step and step.to_state == "archived":
                return day
        return 10_000

    assert days_to_archive(0.5) > days_to_archive(0.2) > days_to_archive(0.0)


def test_archived_memory_reactivates_when_recalled_or_strongly_matched() -> None:
    recalled = next_state(stats(state="archived", age_days=300, recalled_days_ago=2, state_days_ago=30), NOW, TH)
    assert recalled is not None and (recalled.to_state, recalled.reason) == ("active", "recalled")
    # a recall before it was archived does not count
    assert next_state(stats(state="archived", age_days=300, recalled_days_ago=40, state_days_ago=30), NOW, TH) is None
    matched = next_state(stats(state="archived", age_days=300, best_match=0.9), NOW, TH)
    assert matched is not None and matched.to_state == "active"
    assert next_state(stats(state="archived", age_days=300, best_match=0.5), NOW, TH) is None


def test_transitions_are_capped_and_prioritised() -> None:
    memories = [stats(f"fade{i}", age_days=200) for i in range(10)]
    memories += [stats(f"wake{i}", state="archived", age_days=300, best_match=0.99) for i in range(3)]
    plan = plan_transitions(memories, NOW, CurationThresholds(max_transitions=5))
    assert len(plan) == 5
    assert [t.to_state for t in plan[:3]] == ["active"] * 3
    assert plan == plan_transitions(list(reversed(memories)), NOW, CurationThresholds(max_transitions=5))


def _vec(*xs: float) -> tuple[float, ...]:
    return xs


def _cands(items: list[tuple[str, tuple[float, ...] | None, str, float]]) -> list[MergeCandidate]:
    return [MergeCandidate(id=i, summary=summary, importance=imp) for i, _, summary, imp in items]


def _pairs(items: list[tuple[str, tuple[float, ...] | None, str, float]]) -> list[tuple[str, str, float]]:
    """Every pair's similarity, brute force (the service asks pgvector): identical normalised
    summaries are 1.0, otherwise the cosine of the vectors when both have one."""

    def unit(v: tuple[float, ...] | None) -> tuple[float, ...] | None:
        norm = math.sqrt(math.fsum(x * x for x in v)) if v else 0.0
        return tuple(x / norm for x in v) if v and norm else None

    pairs = []
    for n, (a, va, sa, _) in enumerate(items):
        for b, vb, sb, _ in items[n + 1 :]:
            ua, ub = unit(va), unit(vb)
            if normalise_text(sa) and normalise_text(sa) == normalise_text(sb):
                pairs.append((a, b, 1.0))
            elif ua is not None and ub is not None:
                pairs.append((a, b, sum(x * y for x, y in zip(ua, ub, strict=True))))
    return pairs


def _merge(items: list[tuple[str, tuple[float, ...] | None, str, float]], th: CurationThresholds) -> list:
    return plan_merges(_cands(items), th, _pairs(items))


def test_merge_groups_near_duplicates_around_most_important() -> None:
    items = [
        ("a", _vec(1, 0, 0), "User likes tea", 0.3),
        ("b", _vec(0.99, 0.05, 0), "User loves tea", 0.9),
        ("c", _vec(0, 1, 0), "Trip to Rome", 0.5),
        ("d", None, "trip to rome!", 0.1),
        ("e", _vec(0, 0, 1), "Unrelated", 0.4),
    ]
    groups = _merge(items, TH)
    assert [(g.survivor_id, g.merged_ids) for g in groups] == [("b", ("a",)), ("c", ("d",))]
    assert all(g.min_similarity >= TH.merge_similarity for g in groups)


def test_merge_has_no_chaining_and_respects_caps() -> None:
    # a ~ b and b ~ c but a !~ c: c is not merged into a through b
    a, b, c = _vec(1, 0), _vec(math.cos(0.3), math.sin(0.3)), _vec(math.cos(0.6), math.sin(0.6))
    th = CurationThresholds(merge_similarity=math.cos(0.35))
    groups = _merge([("a", a, "a", 0.9), ("b", b, "b", 0.5), ("c", c, "c", 0.1)], th)
    assert [(g.survivor_id, g.merged_ids) for g in groups] == [("a", ("b",))]
    many = [(f"m{i}", _vec(1, 0), f"s{i}", i / 100) for i in range(30)]
    capped = _merge(many, CurationThresholds(max_group_size=4, max_merge_groups=2))
    assert len(capped) == 2 and all(len(g.merged_ids) == 3 for g in capped)
    assert capped[0].survivor_id == "m29"


def test_merge_uses_only_the_pairs_given() -> None:
    cands = [MergeCandidate(id=i, summary=i, importance=imp) for i, imp in (("x", 0.2), ("y", 0.8))]
    assert [(g.survivor_id, g.merged_ids) for g in plan_merges(cands, TH, pairs=[("x", "y", 0.97)])] == [("y", ("x",))]
    assert plan_merges(cands, TH, pairs=[("x", "y", 0.5)]) == []
    assert plan_merges(cands, TH, pairs=[]) == []


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.lists(st.floats(-1, 1), min_size=3, max_size=3), st.floats(0, 1)), max_size=25))
def test_merge_plan_is_a_disjoint_star_partition(items) -> None:
    rows = [(f"i{n}", tuple(v), f"s{n}", imp) for n, (v, imp) in enumerate(items)]
    th = CurationThresholds(merge_similarity=0.9)
    groups = _merge(rows, th)
    seen: list[str] = []
    by_id = {c.id: c for c in _cands(rows)}
    for g in groups:
        seen += [g.survivor_id, *g.merged_ids]
        assert all(by_id[g.survivor_id].importance >= by_id[m].importance for m in g.merged_ids)
    assert len(seen) == len(set(seen))
    assert groups == _merge(list(reversed(rows)), th)
