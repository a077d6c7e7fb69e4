"""Knowledge writes: deduplicate against current knowledge, supersede contradicted facts.

Each draft (oldest statement first) is, in this order: 1. corroborating a current item with the
same normalised content; 2. for the same ``subject_key``: corroborating (same value) or superseding
it (different value; a back-dated statement is stored already superseded); 3. corroborating a
current item or earlier draft at vector similarity ≥ threshold; 4. a new current item.
Similarities come from one exact pgvector statement per chunk: a missed duplicate is a bug.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import ColumnElement, bindparam, or_, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from elephantasm.db.bulk import insert_rows
from elephantasm.db.models import Knowledge, KnowledgeMemory
from elephantasm.db.size_switches import vector_rows, vectors_indexed
from elephantasm.db.tables import table_of
from elephantasm.db.vectors import vector_literal
from elephantasm.domain.dreaming import KnowledgeDraft, content_hash, normalise_value
from elephantasm.ids import uuid7

if TYPE_CHECKING:
    from elephantasm.services.dreams.journal import WriteContext

_KNOWLEDGE = table_of(Knowledge)
_LINKS = table_of(KnowledgeMemory)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_CURRENT_COLUMNS = "id content_hash subject_key content meta valid_from confidence created_at".split()

_SIMILARITY_SQL = text("""
WITH d AS (SELECT ord, CAST(v AS halfvec) AS v FROM unnest(CAST(:vecs AS text[])) WITH ORDINALITY AS u(v, ord)),
cur AS MATERIALIZED (
    SELECT id, embedding FROM knowledge
    WHERE anima_id = :anima AND valid_to IS NULL AND deleted_at IS NULL AND embedding IS NOT NULL
      AND embedding_space = :space
)
SELECT * FROM (
    SELECT DISTINCT ON (d.ord) 'existing' AS kind, d.ord AS a, k.id AS target, NULL::bigint AS b,
           1 - (k.embedding <=> d.v) AS sim
    FROM d JOIN cur k ON (k.embedding <=> d.v) <= 1 - CAST(:threshold AS float8)
    ORDER BY d.ord, k.embedding <=> d.v, k.id
) nearest
UNION ALL
SELECT 'batch', x.ord, NULL, y.ord, 1 - (x.v <=> y.v)
FROM d x JOIN d y ON y.ord < x.ord WHERE (x.v <=> y.v) <= 1 - CAST(:threshold AS float8)
""")


@dataclass
class KnowledgeOutcome:
    """What a chunk did to knowledge."""

    created: int = 0
    deduplicated: int = 0
    superseded: int = 0
    historical: int = 0

    def counts(self) -> Counter[str]:
        """Counters for the run journal."""
        return Counter(
            knowledge_deduplicated=self.deduplicated,
            knowledge_superseded=self.superseded,
            knowledge_historical=self.historical,
        )


@dataclass
class _Item:
    """A current knowledge item: stored (``row`` None) or inserted by this chunk (``row`` its values)."""

    id: uuid.UUID
    subject_key: str | None
    value: str
    valid_from: datetime
    confidence: float
    row: dict[str, Any] | None = None
    links: set[uuid.UUID] = field(default_factory=set)


def _value(draft_value: str | None, content: str) -> str:
    return normalise_value(draft_value if draft_value is not None else content)


async def _load_current(
    session: AsyncSession, anima_id: uuid.UUID, hashes: list[str], subjects: list[str], ids: list[uuid.UUID]
) -> list[Any]:
    """Current items sharing a content hash or a subject with the drafts, or similar to one."""
    # A large anima's hash lookup names the partial index's predicate so the index answers it (all
    # its rows carry the flag: the flip marks them with the anima, the trigger later ones); a small
    # anima's few items are read through ``ix_knowledge_anima_subject``'s anima prefix.
    large = await vectors_indexed(session, anima_id)  # its knowledge is in ix_knowledge_anima_hash
    by_hash = _KNOWLEDGE.c.content_hash.in_(hashes)
    cond: list[ColumnElement[bool]] = [by_hash & vector_rows(_KNOWLEDGE, large)]
    if subjects:
        cond.append(_KNOWLEDGE.c.subject_key.in_(subjects))
    if ids:
        cond.append(_KNOWLEDGE.c.id.in_(ids))
    stmt = (
        select(*(_KNOWLEDGE.c[name] for name in _CURRENT_COLUMNS))
        .where(
            _KNOWLEDGE.c.anima_id == anima_id,
            _KNOWLEDGE.c.valid_to.is_(None),
            _KNOWLEDGE.c.deleted_at.is_(None),
            or_(*cond),
        )
        .order_by(_KNOWLEDGE.c.created_at, _KNOWLEDGE.c.id)
    )
    return list((await session.execute(stmt)).all())


async def _similar(
    session: AsyncSession, anima_id: uuid.UUID, vectors: Sequence[Sequence[float]], threshold: float, space: int | None
) -> tuple[dict[int, uuid.UUID], dict[int, list[int]]]:
    """Per draft index: the nearest current item at/above threshold (same embedding space only),
    and similar drafts of the batch."""
    params = {"vecs": [vector_literal(v) for v in vectors], "anima": anima_id, "threshold": threshold, "space": space}
    rows = (await session.execute(_SIMILARITY_SQL, params)).all()
    nearest: dict[int, uuid.UUID] = {}
    pairs: dict[int, list[int]] = {}
    for kind, a, target, b, _sim in rows:
        if kind == "existing":
            nearest[a - 1] = target
        else:
            pairs.setdefault(a - 1, []).append(b - 1)
            pairs.setdefault(b - 1, []).append(a - 1)
    return nearest, pairs


class _Placer:
    """Decides, draft by draft, what each one does to the anima's current knowledge."""

    def __init__(self, ctx: WriteContext, current: list[Any], actions: list[dict]) -> None:
        self.ctx, self.actions, self.outcome = ctx, actions, KnowledgeOutcome()
        self.by_id: dict[uuid.UUID, _Item] = {}
        self.by_hash: dict[str, _Item] = {}
        self.by_subject: dict[str, _Item] = {}
        self.superseded: list[dict[str, Any]] = []
        self.bumped: set[uuid.UUID] = set()
        self.new_rows: list[dict[str, Any]] = []
        for r in current:
            value = _value((r.meta or {}).get("value"), r.content)
            self._make_current(_Item(r.id, r.subject_key, value, r.valid_from or _EPOCH, r.confidence), r.content_hash)
        self.placed: dict[int, _Item] = {}

    def _make_current(self, item: _Item, content_hash: str) -> None:
        self.by_id[item.id] = item
        self.by_hash.setdefault(content_hash, item)
        if item.subject_key:
            self.by_subject[item.subject_key] = item

    def place(
        self,
        i: int,
        draft: KnowledgeDraft,
        key: str,
        vf: datetime,
        links: set[uuid.UUID],
        vector: Sequence[float],
        nearest: uuid.UUID | None,
        batch_peers: list[int],
    ) -> None:
        """Apply rules 1-4 of the module docstring to draft ``i``."""
        if key in self.by_hash:
            return self._corroborate(i, self.by_hash[key], draft, links)
        value = _value(draft.value, draft.content)
        cur = self.by_subject.get(draft.subject_key) if draft.subject_key else None
        if cur is not None:
            if cur.value == value:
                return self._corroborate(i, cur, draft, links)
            if vf >= cur.valid_from:
                new = self._insert(i, draft, key, value, vf, links, vector)
                return self._supersede(cur, new, vf, draft)
            self._insert(i, draft, key, value, vf, links, vector, superseded_by=cur)
            self.outcome.historical += 1
            return None
        target = self.by_id.get(nearest) if nearest is not None else None
        if target is None:
            target = next((self.placed[j] for j in batch_peers if j in self.placed), None)
        same_subject = target is not None and (
            not draft.subject_key or not target.subject_key or target.subject_key == draft.subject_key
        )
        if target is not None and target.id in self.by_id and same_subject:
            return self._corroborate(i, target, draft, links)
        self._insert(i, draft, key, value, vf, links, vector)
        return None

    def _corroborate(self, i: int, item: _Item, draft: KnowledgeDraft, links: set[uuid.UUID]) -> None:
        self.placed[i] = item
        item.links |= links
        item.confidence = round(min(0.95, max(item.confidence, draft.confidence) + 0.05), 4)
        self.outcome.deduplicated += 1
        if item.row is not None:
            item.row["confidence"] = item.confidence
            return
        self.bumped.add(item.id)
        after = {"duplicate": draft.content, "confidence": item.confidence, "memories_added": len(links)}
        self.actions.append(self.ctx.action("merged", "knowledge", item.id, None, after))

    def _insert(
        self,
        i: int,
        draft: KnowledgeDraft,
        key: str,
        value: str,
        vf: datetime,
        links: set[uuid.UUID],
        vector: Sequence[float],
        superseded_by: _Item | None = None,
    ) -> _Item:
        ctx = self.ctx
        kid = uuid7()
        row = {
            "id": kid,
            "org_id": ctx.org_id,
            "anima_id": ctx.anima_id,
            "type": draft.type,
            "topic": (draft.topic or "general")[:200],
            "subject_key": draft.subject_key[:300] if draft.subject_key else None,
            "content": draft.content,
            "summary": draft.summary,
            "content_hash": key,
            "confidence": draft.confidence,
            "importance": draft.importance,
            "valid_from": vf,
            "valid_to": superseded_by.valid_from if superseded_by else None,
            "superseded_by": superseded_by.id if superseded_by else None,
            "meta": {"value": draft.value},  # its run: the journal's "created" entry
            "embedding": list(vector),
            "embedding_space": ctx.space,
            "created_at": ctx.now,
            "updated_at": ctx.now,
        }
        item = _Item(kid, draft.subject_key, value, vf, draft.confidence, row, set(links))
        self.new_rows.append(row)
        self.placed[i] = item
        self.outcome.created += 1
        after = {
            "type": draft.type,
            "topic": row["topic"],
            "content": draft.content,
            "subject_key": draft.subject_key,
            "value": draft.value,
            "superseded_by": str(row["superseded_by"]) if row["superseded_by"] else None,
        }
        self.actions.append(ctx.action("created", "knowledge", kid, None, after))
        if superseded_by is None:
            self._make_current(item, key)
        return item

    def _supersede(self, old: _Item, new: _Item, vf: datetime, draft: KnowledgeDraft) -> None:
        self.outcome.superseded += 1
        self.by_id.pop(old.id, None)
        self.by_hash = {k: v for k, v in self.by_hash.items() if v is not old}
        if old.row is not None:  # superseded within this chunk
            old.row.update(valid_to=vf, superseded_by=new.id)
        else:
            self.superseded.append({"b_id": old.id, "b_valid_to": vf, "b_by": new.id})
        before = {"value": old.value, "valid_to": None, "superseded_by": None}
        after = {"value": draft.value, "valid_to": vf.isoformat(), "superseded_by": str(new.id)}
        self.actions.append(self.ctx.action("superseded", "knowledge", old.id, before, after))


async def _apply(session: AsyncSession, placer: _Placer) -> None:
    ctx = placer.ctx
    if placer.new_rows:
        await insert_rows(session, _KNOWLEDGE, placer.new_rows)
    by_id = update(_KNOWLEDGE).where(_KNOWLEDGE.c.id == bindparam("b_id")).values(updated_at=ctx.now)
    if placer.superseded:
        await session.execute(
            by_id.values(valid_to=bindparam("b_valid_to"), superseded_by=bindparam("b_by")), placer.superseded
        )
    bumps = [{"b_id": i, "b_conf": placer.by_id[i].confidence} for i in placer.bumped if i in placer.by_id]
    if bumps:
        await session.execute(by_id.values(confidence=bindparam("b_conf")), bumps)
    items = {id(item): item for item in placer.placed.values()}.values()
    links = [
        {"knowledge_id": it.id, "memory_id": m, "org_id": ctx.org_id, "anima_id": ctx.anima_id}
        for it in items
        for m in sorted(it.links)
    ]
    if links:
        await insert_rows(session, _LINKS, links, skip_conflicts=True)


async def write_knowledge(
    session: AsyncSession,
    ctx: WriteContext,
    drafts: Sequence[KnowledgeDraft],
    memory_ids: Sequence[uuid.UUID],
    vectors: Sequence[Sequence[float]],
    event_times: Mapping[uuid.UUID, datetime],
    threshold: float,
    actions: list[dict],
) -> KnowledgeOutcome:
    """Place every draft (see module docstring) and write the result inside the caller's transaction."""
    if not drafts:
        return KnowledgeOutcome()
    hashes = [content_hash(d.content) for d in drafts]
    subjects = sorted({d.subject_key for d in drafts if d.subject_key})
    nearest, pairs = await _similar(session, ctx.anima_id, vectors, threshold, ctx.space)
    current = await _load_current(session, ctx.anima_id, hashes, subjects, sorted(set(nearest.values())))
    placer = _Placer(ctx, current, actions)

    def valid_from(d: KnowledgeDraft) -> datetime:
        times = [event_times[e] for e in d.source_event_ids if e in event_times]
        return max(times) if times else ctx.now

    starts = [valid_from(d) for d in drafts]
    for i in sorted(range(len(drafts)), key=lambda i: (starts[i], i)):
        links = {memory_ids[j] for j in drafts[i].source_memory_indices}
        placer.place(i, drafts[i], hashes[i], starts[i], links, vectors[i], nearest.get(i), pairs.get(i, []))
    await _apply(session, placer)
    return placer.outcome
