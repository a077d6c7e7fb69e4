"""The dream journal and the journaled write: how every step of a dream run changes the database.

A step is one short transaction holding the anima's dreamer lock and the run's lease; it commits
its changes with its journal entries, the anima's ``state_version`` bump and the run's counters.
One ``dream_actions`` row holds consecutive entries of one action and target type (ids as
``uuid[]``, before/after as jsonb arrays); an entry's id is its row's id plus its position.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy.ext.asyncio import AsyncSession

from elephantasm.db.bulk import insert_rows
from elephantasm.db.models import DreamAction
from elephantasm.db.tables import table_of
from elephantasm.ids import new_batch
from elephantasm.services.animas import bump_state_version
from elephantasm.services.dreams.claims import lock_anima
from elephantasm.services.dreams.deps import DreamDeps
from elephantasm.services.dreams.runs import RunStats, hold_lease, save_progress

if TYPE_CHECKING:
    from elephantasm.db.models import DreamRun

_ACTIONS = table_of(DreamAction)

Values = dict[str, Any] | None
"""An entry's before or after values."""
POSITION_BITS = 16
MAX_ENTRIES = 1 << POSITION_BITS
"""Entries one row can hold: their positions fill the low bits of the row id."""


@dataclass(frozen=True)
class JournalEntry:
    """One journal entry as readers see it (the wire's ``DreamActionRead``)."""

    id: uuid.UUID
    action: str
    target_type: str
    target_id: uuid.UUID | None
    before: Any
    after: Any
    created_at: datetime


def entry_id(row_id: uuid.UUID, position: int) -> uuid.UUID:
    """The id of the entry at ``position`` of the row ``row_id``."""
    return uuid.UUID(int=(row_id.int >> POSITION_BITS << POSITION_BITS) | position)


def _values(entries: Sequence[dict[str, Any]], key: str) -> list[Any] | None:
    values = [e[key] for e in entries]
    return None if all(v is None for v in values) else values


def _groups(entries: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Entries in runs that keep the readers' order, (action, id): a row is closed when another
    target type writes the same action, so the rows of one action never interleave."""
    groups: list[list[dict[str, Any]]] = []
    open_by_action: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        group = open_by_action.get(entry["action"])
        if group is None or group[0]["target_type"] != entry["target_type"] or len(group) == MAX_ENTRIES:
            group = []
            groups.append(group)
            open_by_action[entry["action"]] = group
        group.append(entry)
    return groups


def batch_rows(
    entries: Sequence[dict[str, Any]], new_ids: Callable[[int], Sequence[uuid.UUID]], base: dict[str, Any]
) -> list[dict[str, Any]]:
    """The dream_actions rows holding ``entries`` (dicts of action, target_type, target_id, before,
    after, in the order they were written); ``base`` holds the step's columns (org, anima, run,
    created_at) and ``new_ids(n)`` gives n increasing row ids."""
    groups = _groups(entries)
    ids = new_ids(len(groups))
    return [
        {
            **base,
            "id": row_id,
            "action": group[0]["action"],
            "target_type": group[0]["target_type"],
            "target_ids": [e["target_id"] for e in group],
            "befores": _values(group, "before"),
            "afters": _values(group, "after"),
        }
        for row_id, group in zip(ids, groups, strict=True)
    ]


def expand(row: Any) -> list[JournalEntry]:
    """The entries of one dream_actions row, in the order they were written."""
    n = len(row.target_ids)
    befores = row.befores if row.befores is not None else [None] * n
    afters = row.afters if row.afters is not None else [None] * n
    return [
        JournalEntry(
            entry_id(row.id, i), row.action, row.target_type, row.target_ids[i], befores[i], afters[i], row.created_at
        )
        for i in range(n)
    ]


@dataclass(frozen=True)
class WriteContext:
    """Who and when a write is for; also builds journal entries."""

    org_id: uuid.UUID
    anima_id: uuid.UUID
    run_id: uuid.UUID
    now: datetime
    space: int | None = None
    """Code of the embedding space the step's vectors live in (``services.spaces``)."""

    def action(
        self, action: str, target_type: str, target_id: uuid.UUID | None, before: Values = None, after: Values = None
    ) -> dict[str, Any]:
        """A journal entry; the step stores its entries batched (:func:`batch_rows`)."""
        return {"action": action, "target_type": target_type, "target_id": target_id, "before": before, "after": after}


@dataclass
class JournaledWrite:
    """The open step: its session, context, journal entries and the run's counters after it."""

    session: AsyncSession
    ctx: WriteContext
    stats: RunStats
    actions: list[dict[str, Any]] = field(default_factory=list)
    changes_packs: bool = False
    """Set when the step changes what a pack shows even if it journals nothing."""


@asynccontextmanager
async def journaled_write(deps: DreamDeps, run: DreamRun, stats: RunStats) -> AsyncIterator[JournaledWrite]:
    """Run one step of ``run`` in its own transaction (see the module docstring).

    RunLostError if the run lost its lease; ``stats`` is updated only after the commit.
    """
    space = await deps.space()  # before the step's transaction: a new label commits on its own
    async with deps.unit_of_work() as session:
        await lock_anima(session, run.anima_id)
        await hold_lease(session, run.id)
        ctx = WriteContext(run.org_id, run.anima_id, run.id, deps.clock(), space)
        step = JournaledWrite(session, ctx, copy.deepcopy(stats))
        yield step
        if step.actions:
            base = {"org_id": ctx.org_id, "anima_id": ctx.anima_id, "run_id": ctx.run_id, "created_at": ctx.now}
            await insert_rows(session, _ACTIONS, batch_rows(step.actions, new_batch, base))
        if step.actions or step.changes_packs:
            await bump_state_version(session, [run.anima_id])
        await save_progress(session, run.id, step.stats, ctx.now)
    vars(stats).update(vars(step.stats))
