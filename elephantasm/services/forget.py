"""Forgetting: deleting a memory or a knowledge item removes every derived copy of its text.

A deleted memory takes with it the memories merged into it and the knowledge drawn only from those.
In the caller's transaction: the rows stay (ids keep provenance auditable) with text, vectors and
meta scrubbed; the identity's per-topic evidence, journal entries' before/after, served packs and
snapshots, and the hooks' stores (KV snapshots, recorded prompts) lose it; ``forgotten_version``
is set to the bumped ``state_version``, so a pack compiled concurrently is never recorded, nor
anything made from it (:func:`still_current`). After the commit :func:`drop_cached` drops this
process's cached packs holding it (other replicas' are keyed by the old state version).
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlmodel import col

from elephantasm.db.models import Anima, Identity
from elephantasm.db.queries import animas as anima_q
from elephantasm.db.queries import forgetting as q
from elephantasm.domain.errors import NotFoundError
from elephantasm.domain.lean import lean_text
from elephantasm.services.dreams.claims import lock_anima
from elephantasm.services.packs.state import PackState

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession


@dataclass
class Forgotten:
    """What one deletion removed (ids), for the caller and for :func:`drop_cached`."""

    anima_id: uuid.UUID
    memory_ids: list[uuid.UUID] = field(default_factory=list)
    knowledge_ids: list[uuid.UUID] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    """The forgotten items' texts as they were (for hooks that find copies by text); never returned."""
    event_ids: list[uuid.UUID] = field(default_factory=list)
    """The forgotten memories' source events: a pack served before the dream showed them as raw
    turns, citing them, and goes too (the events themselves, the client's log, stay)."""

    @property
    def ids(self) -> list[uuid.UUID]:
        """Every forgotten id."""
        return [*self.memory_ids, *self.knowledge_ids]

    @property
    def cited_ids(self) -> list[uuid.UUID]:
        """Every id a cached pack may mention because of this deletion (for :func:`drop_cached`)."""
        return [*self.ids, *self.event_ids]


ForgetHook = Callable[["AsyncSession", uuid.UUID, Forgotten], Awaitable[None]]
"""``hook(session, org_id, forgotten)``: a store outside the core tables erases its copies of the texts."""


async def _lock(session: AsyncSession, anima_id: uuid.UUID) -> None:
    """Hold off dream writes (advisory lock) and pack recording (row lock) for the anima."""
    await lock_anima(session, anima_id)
    await anima_q.lock_row(session, anima_id)


async def _lock_live(session: AsyncSession, kind: str, org_id: uuid.UUID, item_id: uuid.UUID) -> uuid.UUID:
    """Lock the item's anima (no dream write, no pack recording meanwhile) and return it;
    NotFoundError unless the item is live, checked again once locked (concurrent deletions: one
    forgets, the others are 404s)."""
    anima_id = await q.anima_of_live_item(session, kind, org_id, item_id)
    if anima_id is not None:
        await _lock(session, anima_id)
        anima_id = await q.anima_of_live_item(session, kind, org_id, item_id)
    if anima_id is None:
        raise NotFoundError(f"{kind} {item_id} not found")
    return anima_id


async def _scrub(session: AsyncSession, done: Forgotten, now: datetime) -> None:
    """Scrub the rows, the identity's evidence, the journal and the served packs; bump the state."""
    texts = await q.item_texts(session, done.memory_ids, done.knowledge_ids)
    done.texts = sorted({t for summary, content in texts for t in quotable_texts(summary, content)})
    await q.scrub(session, "memory", done.memory_ids, now)
    if done.knowledge_ids:
        topics = await q.evidence(session, done.knowledge_ids)
        await q.scrub(session, "knowledge", done.knowledge_ids, now)
        await _drop_identity_evidence(session, done.anima_id, topics)
    await q.redact_journal(session, done.anima_id, done.ids)
    await _purge_served(session, done)


async def _purge_served(session: AsyncSession, done: Forgotten, *, bump: bool = True) -> None:
    """Served packs quoting the items or citing their source events, and the anima's shared
    snapshots, go; the state moves on (with ``bump``; else the caller's update moves it)."""
    await q.purge_served(session, done.anima_id, done.cited_ids)
    await anima_q.mark_forgotten(session, done.anima_id, bump=bump)


async def unserve_old_text(
    session: AsyncSession, org_id: uuid.UUID, memory: Any, hooks: Sequence[ForgetHook]
) -> Forgotten:
    """A memory's text is being edited: every copy handed out with the old text goes, as for a
    deletion; the memory and the journal stay. Call in the update's transaction, before the update
    (which bumps ``state_version`` to the ``forgotten_version`` set here); :func:`drop_cached` after."""
    await _lock(session, memory.anima_id)
    done = Forgotten(memory.anima_id, [memory.id], [])
    done.texts = sorted(quotable_texts(memory.summary, memory.content))
    await _purge_served(session, done, bump=False)
    await _run_hooks(hooks, session, org_id, done)
    return done


async def _run_hooks(hooks: Sequence[ForgetHook], session: AsyncSession, org_id: uuid.UUID, done: Forgotten) -> None:
    """Let the stores outside these tables erase their copies."""
    for hook in hooks:
        await hook(session, org_id, done)


# A content line shorter than this many words is not looked for on its own (too common to be a quote).
_MIN_LINE_WORDS = 3


def quotable_texts(summary: str | None, content: str | None) -> set[str]:
    """Every form in which an item's text can appear in a prompt: as stored, as packs render it
    (filler dropped), and each line of its content on its own (a pack with a query may render a
    memory as the one turn that matched)."""
    out = {t for t in (summary, content) if t and t.strip()}
    out |= {lean_text(t) for t in tuple(out)}
    for line in (content or "").splitlines():
        lean = lean_text(line)
        if len(lean.split()) >= _MIN_LINE_WORDS:
            out |= {line.strip(), lean}
    return {t for t in out if t}


def _without(self_: dict[str, Any], topics: Counter[str]) -> dict[str, Any] | None:
    """``self_`` with ``topics`` subtracted from its topic counts, or None when nothing changes."""
    counts = self_.get("topics")
    if not isinstance(counts, dict) or not topics.keys() & counts.keys():
        return None
    left = {k: int(v) - topics.get(k, 0) for k, v in counts.items() if isinstance(v, int | float)}
    return {**self_, "topics": {k: v for k, v in sorted(left.items()) if v > 0}}


async def _drop_identity_evidence(
    session: AsyncSession, anima_id: uuid.UUID, evidence: list[tuple[str, datetime]]
) -> None:
    """Subtract forgotten knowledge from the topic counts of every identity version written since."""
    if not evidence:
        return
    for row in await q.identity_rows(session, anima_id):
        learnt_by = row.updated_at if isinstance(row, Identity) else row.created_at
        topics = Counter(t for t, at in evidence if at <= learnt_by)
        changed = _without(dict(row.self or {}), topics)
        if changed is not None:
            row.self = changed
    await session.flush()


async def forget(
    session: AsyncSession,
    org_id: uuid.UUID,
    kind: str,
    item_id: uuid.UUID,
    now: datetime,
    hooks: Sequence[ForgetHook],
) -> Forgotten:
    """Forget a ``"memory"`` or ``"knowledge"`` item in the caller's transaction, hooks included;
    after the commit the caller drops cached packs (:func:`drop_cached` with ``cited_ids``)."""
    anima_id = await _lock_live(session, kind, org_id, item_id)
    if kind == "memory":
        gone, orphaned, events = await q.memory_closure(session, anima_id, item_id)
        done = Forgotten(anima_id, gone, orphaned, event_ids=events)
    else:  # its source memories stay
        done = Forgotten(anima_id, [], [item_id])
    await _scrub(session, done, now)
    await _run_hooks(hooks, session, org_id, done)
    return done


async def still_current(session: AsyncSession, anima_id: uuid.UUID, state_version: int) -> bool:
    """Whether what was made from the anima's pack at ``state_version`` (a KV snapshot, a recorded
    prompt) may be written in this transaction: no deletion since. Call before the write; a
    deletion in progress is waited for (this key-share lock meets its row lock), then counted."""
    stmt = select(col(Anima.forgotten_version) <= state_version).where(col(Anima.id) == anima_id)
    return bool((await session.execute(stmt.with_for_update(key_share=True))).scalar())


def drop_cached(packs: PackState, ids: Sequence[uuid.UUID]) -> int:
    """Drop this process's cached packs that mention any of ``ids``; returns how many."""
    return packs.lru.discard_mentioning([str(i).encode() for i in ids])
