"""The "sleep" pass of a run: merge near-duplicate memories, then move memories between states.

Planning is pure (``elephantasm.domain.dreaming.curation``); this module gathers its inputs in one
short transaction (pgvector neighbours of this run's new memories, every live memory's stats),
applies the plan with set-based statements, and journals every change with before/after.
Merges keep the union of provenance: the survivor links every event of the merged memories, the
merged ones are archived with ``merged_into`` (their own links stay), and knowledge links move to
the survivor, so no reference ever dangles.
"""

from __future__ import annotations

import functools
import uuid
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import Select, TextClause, func, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from elephantasm.db.models import Memory, MemoryRecall
from elephantasm.db.size_switches import vector_rows_sql, vectors_indexed
from elephantasm.db.tables import table_of
from elephantasm.db.vectors import hnsw_distance, width_is
from elephantasm.domain.dreaming import (
    CurationThresholds,
    MemoryStats,
    MergeCandidate,
    MergeGroup,
    Transition,
    plan_merges,
    plan_transitions,
)
from elephantasm.services.dreams.deps import DreamDeps
from elephantasm.services.dreams.journal import WriteContext, journaled_write
from elephantasm.services.dreams.runs import RunStats

if TYPE_CHECKING:
    from elephantasm.db.models import DreamRun

NEIGHBOURS = 5
_STATS_COLUMNS = ("id", "state", "importance", "recall_count", "created_at", "last_recalled_at")
_M, _RECALLS = table_of(Memory), table_of(MemoryRecall)


@functools.cache
def _neighbours_sql(dim: int, indexed: bool) -> TextClause:
    """Nearest memories of each new one, among vectors of its space (width ``dim``: the width's
    HNSW index answers when the anima's memories are ``indexed``, ``elephantasm.db.vectors``;
    otherwise its rows are compared exactly)."""
    distance = hnsw_distance("m.embedding", "n.embedding", dim)
    return text(f"""
SELECT n.id AS new_id, c.id AS other_id, c.state, c.sim
FROM memories n CROSS JOIN LATERAL (
    SELECT m.id, m.state, 1 - ({distance}) AS sim FROM memories m
    WHERE m.anima_id = n.anima_id AND m.id <> n.id AND m.deleted_at IS NULL AND m.merged_into IS NULL
      AND {width_is("m.embedding", dim)} AND m.embedding_space = n.embedding_space{vector_rows_sql("m", indexed)}
    ORDER BY {distance} LIMIT :k
) c
WHERE n.id = ANY(:ids) AND {width_is("n.embedding", dim)} AND n.merged_into IS NULL AND c.sim >= :min_sim
""")


_HNSW_ONLY = (
    "hnsw.iterative_scan = relaxed_order",
    "enable_seqscan = off",
    "enable_bitmapscan = off",
    "enable_sort = off",
)
# Every merge group of the pass at once, as (survivor, merged member) pairs: groups are disjoint
# (``plan_merges`` takes each memory at most once), so set-based statements do what one pass per
# group did, in a fixed number of round trips.
_PAIRS = "unnest(CAST(:ss AS uuid[]), CAST(:ms AS uuid[])) AS g(s, m)"
_MERGE_SQL = [
    text(f"""INSERT INTO knowledge_memories (knowledge_id, memory_id, org_id, anima_id)
            SELECT km.knowledge_id, g.s, km.org_id, km.anima_id FROM knowledge_memories km
            JOIN {_PAIRS} ON km.memory_id = g.m
            ON CONFLICT DO NOTHING"""),
    text("DELETE FROM knowledge_memories WHERE memory_id = ANY(CAST(:ms AS uuid[]))"),
    # A survivor inherits its members' recalls (their sum; its own last recall time stays).
    text(f"""INSERT INTO memory_recalls AS mr (memory_id, org_id, anima_id, recall_count)
            SELECT g.s, sv.org_id, sv.anima_id, sum(x.recall_count) FROM {_PAIRS}
            JOIN memory_recalls x ON x.memory_id = g.m JOIN memories sv ON sv.id = g.s
            GROUP BY g.s, sv.org_id, sv.anima_id HAVING sum(x.recall_count) <> 0
            ON CONFLICT (memory_id) DO UPDATE SET recall_count = mr.recall_count + excluded.recall_count"""),
    text(f"UPDATE memories x SET merged_into = g.s FROM {_PAIRS} WHERE x.merged_into = g.m"),
    text(f"""UPDATE memories m SET time_start = LEAST(m.time_start, a.ts), time_end = GREATEST(m.time_end, a.te),
                importance = GREATEST(m.importance, a.imp), confidence = LEAST(0.95, GREATEST(m.confidence, a.conf) + 0.05),
                updated_at = :now,
                session_id = CASE WHEN a.same_session THEN m.session_id END,
                event_ids = ARRAY(SELECT DISTINCT e FROM memories y CROSS JOIN LATERAL unnest(y.event_ids) AS e
                                  WHERE y.id = m.id OR y.id = ANY(a.ms) ORDER BY e)
            FROM (SELECT g.s, array_agg(g.m) ms, min(x.time_start) ts, max(x.time_end) te, max(x.importance) imp,
                         max(x.confidence) conf, bool_and(x.session_id IS NOT DISTINCT FROM sv.session_id) AS same_session
                  FROM {_PAIRS} JOIN memories x ON x.id = g.m JOIN memories sv ON sv.id = g.s GROUP BY g.s) a
            WHERE m.id = a.s"""),
    text(f"""UPDATE memories x SET state = 'archived', merged_into = g.s, updated_at = :now,
                meta = x.meta || jsonb_build_object('state_since', CAST(:since AS text))
                FROM {_PAIRS} WHERE x.id = g.m"""),
]
_TRANSITION_SQL = text("""UPDATE memories SET state = :to, updated_at = :now,
    meta = meta || jsonb_build_object('state_since', CAST(:since AS text)) WHERE id = ANY(:ids)""")


async def _neighbours(
    session: AsyncSession, anima_id: uuid.UUID, ids: list[uuid.UUID], min_sim: float, dim: int
) -> list[Any]:
    if not ids:
        return []
    params = {"ids": ids, "k": NEIGHBOURS, "min_sim": min_sim}
    if not await vectors_indexed(session, anima_id):
        # A small anima (below size_switches.MEMORY_THRESHOLD): its rows are compared exactly.
        return list((await session.execute(_neighbours_sql(dim, False), params)).all())
    # Approximate neighbours through the HNSW index (pgvector >= 0.8 keeps scanning the graph until
    # enough rows pass the anima filter). Left alone, the planner prefers a slower exact scan of the
    # anima's memories per new memory, so the alternatives are priced out for this one statement.
    for setting in _HNSW_ONLY:
        await session.execute(text(f"SET LOCAL {setting}"))
    try:
        return list((await session.execute(_neighbours_sql(dim, True), params)).all())
    finally:
        for setting in _HNSW_ONLY:
            await session.execute(text(f"SET LOCAL {setting.split(' = ')[0]} TO DEFAULT"))


def _stats_of(anima_id: uuid.UUID) -> Select[Any]:
    """Every live memory of the anima with what curation weighs: importance, recalls, age, state."""
    m, r = _M.c, _RECALLS.c
    return (
        select(
            m.id,
            m.state,
            m.importance,
            func.coalesce(r.recall_count, 0).label("recall_count"),
            m.created_at,
            r.last_recalled_at,
            m.summary,
            m.time_start,
            m.meta["state_since"].astext.label("since"),
        )
        .select_from(_M.outerjoin(_RECALLS, r.memory_id == m.id))
        .where(m.anima_id == anima_id, m.deleted_at.is_(None), m.merged_into.is_(None))
    )


def _stats(rows: list[Any], best: dict[uuid.UUID, float]) -> list[MemoryStats]:
    return [
        MemoryStats(
            **{name: getattr(r, name) for name in _STATS_COLUMNS},
            state_since=datetime.fromisoformat(r.since) if r.since else None,
            best_match=best.get(r.id),
        )
        for r in rows
    ]


async def _event_counts(session: AsyncSession, survivors: list[uuid.UUID]) -> dict[uuid.UUID, int]:
    stmt = select(_M.c.id, func.cardinality(_M.c.event_ids).label("n")).where(_M.c.id.in_(survivors))
    return {row.id: row.n for row in await session.execute(stmt)}


async def _merge(session: AsyncSession, ctx: WriteContext, groups: list[MergeGroup], actions: list[dict]) -> None:
    """Apply every merge group of the pass (set-based) and journal each one."""
    # The pure domain keys groups by any Hashable; the ids this service hands it are memory UUIDs.
    pairs = [(cast(uuid.UUID, g.survivor_id), cast(uuid.UUID, m)) for g in groups for m in g.merged_ids]
    if not pairs:
        return
    survivors = [cast(uuid.UUID, g.survivor_id) for g in groups]
    before = await _event_counts(session, survivors)
    params = {"ss": [s for s, _ in pairs], "ms": [m for _, m in pairs], "now": ctx.now, "since": ctx.now.isoformat()}
    for stmt in _MERGE_SQL:
        await session.execute(stmt, params)
    after = await _event_counts(session, survivors)
    for group, survivor in zip(groups, survivors, strict=True):
        merged = [str(m) for m in group.merged_ids]
        absorbed = {"events": after.get(survivor, 0), "absorbed": merged, "min_similarity": group.min_similarity}
        actions.append(ctx.action("absorbed", "memory", survivor, {"events": before.get(survivor, 0)}, absorbed))
        for m in group.merged_ids:
            into = {"state": "archived", "merged_into": str(survivor)}
            actions.append(ctx.action("merged", "memory", cast(uuid.UUID, m), {"merged_into": None}, into))


async def _transition(session: AsyncSession, ctx: WriteContext, plan: list[Transition], actions: list[dict]) -> None:
    for to_state in ("active", "decaying", "archived"):
        ids = [t.memory_id for t in plan if t.to_state == to_state]
        if ids:
            await session.execute(
                _TRANSITION_SQL, {"to": to_state, "now": ctx.now, "since": ctx.now.isoformat(), "ids": ids}
            )
    for t in plan:
        name = "reactivated" if t.to_state == "active" else t.to_state
        after = {"state": t.to_state, "reason": t.reason, "decay": t.decay, "strength": t.strength}
        actions.append(ctx.action(name, "memory", cast(uuid.UUID, t.memory_id), {"state": t.from_state}, after))


async def _plan_and_apply(
    session: AsyncSession,
    ctx: WriteContext,
    th: CurationThresholds,
    new_ids: list[uuid.UUID],
    actions: list[dict],
    dim: int,
) -> tuple[int, list[Transition]]:
    near = await _neighbours(session, ctx.anima_id, new_ids, min(th.merge_similarity, th.reactivate_similarity), dim)
    rows = list((await session.execute(_stats_of(ctx.anima_id))).all())
    by_id = {r.id: r for r in rows}
    best: dict[uuid.UUID, float] = {}
    pairs = []
    for n in near:
        if n.state in ("decaying", "archived"):
            best[n.other_id] = max(best.get(n.other_id, 0.0), n.sim)
        elif n.new_id in by_id and n.other_id in by_id:
            pairs.append((n.new_id, n.other_id, n.sim))
    involved = {i for a, b, _ in pairs for i in (a, b)}
    # "Oldest" means the earliest experience (time_start), not the row's insert time: rows of one chunk
    # share created_at, and a tie broken by random ids would make offline runs non-reproducible.
    candidates = [
        MergeCandidate(
            id=i,
            summary=by_id[i].summary,
            importance=by_id[i].importance,
            recall_count=by_id[i].recall_count,
            created_at=by_id[i].time_start or by_id[i].created_at,
        )
        for i in sorted(involved, key=str)
    ]
    groups = plan_merges(candidates, th, pairs) if candidates else []
    await _merge(session, ctx, groups, actions)
    gone = {m for g in groups for m in g.merged_ids}
    plan = plan_transitions(_stats([r for r in rows if r.id not in gone], best), ctx.now, th)
    await _transition(session, ctx, plan, actions)
    return len(gone), plan


async def curate(deps: DreamDeps, run: DreamRun, new_memory_ids: list[uuid.UUID], stats: RunStats) -> None:
    """Curate the anima's memories in one short journaled write (capped by the limits)."""
    limits = deps.limits
    async with journaled_write(deps, run, stats) as step:
        scan = new_memory_ids[-limits.curation_scan_limit :] if limits.curation_scan_limit > 0 else []
        merged, plan = await _plan_and_apply(
            step.session, step.ctx, limits.curation, scan, step.actions, deps.embedder.space.dim
        )
        step.stats.counts["memories_merged"] += merged
        for t in plan:
            step.stats.counts["reactivated" if t.to_state == "active" else t.to_state] += 1
