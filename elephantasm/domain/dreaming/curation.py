"""Curation rules for the dreamer's "sleep" pass: decay, state transitions and merge planning.

Pure and clock-free: the caller passes ``as_of`` and the memories' stats, and gets back a plan
(transitions, merge groups) capped per run. Decay follows the pack scorer's model: ``decay =
1 - 2^(-t/h)`` with ``t`` the time since the last recall (or creation) and ``h`` a half-life that
grows with every recall (spaced repetition). Importance shields a memory from fading.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta


@dataclass(frozen=True, slots=True)
class CurationThresholds:
    """Tunables of a curation pass (the service builds them from settings)."""

    half_life_days: float = 30.0
    recall_growth: float = 1.5  # each recall multiplies the half-life by this
    max_recall_boost: int = 8
    importance_weight: float = 0.35  # share of strength that comes from importance, not freshness
    # With these defaults an unimportant, never-recalled memory starts decaying after ~6 weeks and is
    # archived after ~4 months; one with importance >= 0.9 never fades on time alone.
    decaying_below: float = 0.3
    archive_below: float = 0.12
    reactivate_above: float = 0.55  # strength at which a decaying memory counts as active again
    reactivate_similarity: float = 0.85  # a new experience this close wakes an archived memory
    recall_window: timedelta = timedelta(days=1)
    min_age: timedelta = timedelta(days=1)  # nothing younger than this changes state
    merge_similarity: float = 0.92
    max_transitions: int = 500
    max_merge_groups: int = 50
    max_group_size: int = 10


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryStats:
    """What curation needs to know about one memory.

    ``state_since`` is when it entered its state (unknown: ``None``); ``best_match`` the highest
    similarity of this run's new experiences to it (``None``: not compared).
    """

    id: Hashable
    state: str
    importance: float
    recall_count: int
    created_at: datetime
    last_recalled_at: datetime | None = None
    state_since: datetime | None = None
    best_match: float | None = None


@dataclass(frozen=True, slots=True)
class Transition:
    """One planned state change, with the numbers that justified it (for the run journal)."""

    memory_id: Hashable
    from_state: str
    to_state: str
    reason: str
    decay: float
    strength: float


def memory_decay(stats: MemoryStats, as_of: datetime, thresholds: CurationThresholds) -> float:
    """``1 - 2^(-t/h)`` in [0, 1]: 0 just after creation or a recall, towards 1 as it is forgotten."""
    since = stats.last_recalled_at or stats.created_at
    days = max(0.0, (as_of - since).total_seconds() / 86400.0)
    boost = thresholds.recall_growth ** min(max(stats.recall_count, 0), thresholds.max_recall_boost)
    return 1.0 - 2.0 ** (-days / (thresholds.half_life_days * boost))


def memory_strength(stats: MemoryStats, decay: float, thresholds: CurationThresholds) -> float:
    """How firmly a memory is held: freshness blended with importance, in [0, 1]."""
    w = thresholds.importance_weight
    return (1.0 - w) * (1.0 - decay) + w * min(1.0, max(0.0, stats.importance))


def _recalled_since_state(stats: MemoryStats, as_of: datetime, thresholds: CurationThresholds) -> bool:
    if stats.last_recalled_at is None:
        return False
    if stats.state_since is not None:
        return stats.last_recalled_at > stats.state_since
    return as_of - stats.last_recalled_at <= thresholds.recall_window


def next_state(stats: MemoryStats, as_of: datetime, thresholds: CurationThresholds) -> Transition | None:
    """The one-step transition for a memory, or ``None``: active -> decaying -> archived, and back."""
    decay = memory_decay(stats, as_of, thresholds)
    strength = memory_strength(stats, decay, thresholds)

    def to(state: str, reason: str) -> Transition:
        return Transition(stats.id, stats.state, state, reason, round(decay, 6), round(strength, 6))

    if stats.state in ("decaying", "archived"):
        if _recalled_since_state(stats, as_of, thresholds):
            return to("active", "recalled")
        if stats.best_match is not None and stats.best_match >= thresholds.reactivate_similarity:
            return to("active", "strongly matched by a new experience")
    if as_of - stats.created_at < thresholds.min_age:
        return None
    if stats.state == "active" and strength < thresholds.decaying_below:
        return to("decaying", "strength below decaying threshold")
    if stats.state == "decaying":
        if strength >= thresholds.reactivate_above:
            return to("active", "strength recovered")
        if strength < thresholds.archive_below:
            return to("archived", "strength below archive threshold")
    return None


_PRIORITY = {"active": 0, "archived": 1, "decaying": 2}  # wake first, then archive, then start fading


def plan_transitions(
    memories: Iterable[MemoryStats], as_of: datetime, thresholds: CurationThresholds
) -> list[Transition]:
    """All transitions due, most urgent first, capped at ``max_transitions`` (the rest wait a run)."""
    due = [t for t in (next_state(m, as_of, thresholds) for m in memories) if t is not None]
    due.sort(key=lambda t: (_PRIORITY[t.to_state], t.strength, str(t.memory_id)))
    return due[: thresholds.max_transitions]


@dataclass(frozen=True, slots=True, kw_only=True)
class MergeCandidate:
    """A memory that may be a near-duplicate of another."""

    id: Hashable
    summary: str
    importance: float
    recall_count: int = 0
    created_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class MergeGroup:
    """Merge ``merged_ids`` into ``survivor_id`` (which then links the union of their events)."""

    survivor_id: Hashable
    merged_ids: tuple[Hashable, ...]
    min_similarity: float


def _survivor_order(c: MergeCandidate) -> tuple:
    # The most important memory survives; then the most recalled, then the oldest, then by id.
    created = c.created_at.timestamp() if c.created_at else math.inf
    return (-c.importance, -c.recall_count, created, str(c.id))


def plan_merges(
    candidates: Iterable[MergeCandidate],
    thresholds: CurationThresholds,
    pairs: Iterable[tuple[Hashable, Hashable, float]],
) -> list[MergeGroup]:
    """Group near-duplicates around the highest-importance member; capped per run.

    ``pairs`` are the similarities known (from a pgvector neighbour query); every merged memory is
    near its survivor (star groups, no chaining A~B~C).
    """
    ordered = sorted(candidates, key=_survivor_order)
    threshold = thresholds.merge_similarity
    near: dict[Hashable, dict[Hashable, float]] = {c.id: {} for c in ordered}
    for a, b, sim in pairs:
        if sim >= threshold and a != b and a in near and b in near:
            near[a][b] = near[b][a] = sim
    rank = {c.id: i for i, c in enumerate(ordered)}
    taken: set[Hashable] = set()
    groups: list[MergeGroup] = []
    for seed in ordered:
        if len(groups) >= thresholds.max_merge_groups:
            break
        if seed.id in taken:
            continue
        members = sorted((m for m in near[seed.id] if m not in taken), key=rank.__getitem__)
        members = members[: thresholds.max_group_size - 1]
        if not members:
            continue
        taken.add(seed.id)
        taken.update(members)
        groups.append(MergeGroup(seed.id, tuple(members), round(min(near[seed.id][m] for m in members), 6)))
    return groups
