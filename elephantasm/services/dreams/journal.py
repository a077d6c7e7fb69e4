"""The journaled write: how every step of a dream run changes the database.

One short transaction that holds the anima's dreamer lock and the run's lease, collects the
step's journal entries, and commits them together with the step's changes, the anima's
``state_version`` bump (when packs may change) and the run's counters. The counters the caller
holds are updated only once the transaction has committed, so a step that fails leaves them, and
the database, as they were.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import AsyncIterator
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
from elephantasm.services.dreams.journal_rows import batch_rows
from elephantasm.services.dreams.runs import RunStats, hold_lease, save_progress
from elephantasm.services.spaces import current_space

if TYPE_CHECKING:
    from elephantasm.db.models import DreamRun
    from elephantasm.runtime import Runtime

_ACTIONS = table_of(DreamAction)


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
        self,
        action: str,
        target_type: str,
        target_id: uuid.UUID | None,
        before: dict[str, Any] | None = None,
        after: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A journal entry; the step stores its entries batched (``journal_rows.batch_rows``)."""
        return {"action": action, "target_type": target_type, "target_id": target_id, "before": before, "after": after}

    def journal_rows(self, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The dream_actions rows holding ``entries`` (this step's, in the order they were written)."""
        base = {"org_id": self.org_id, "anima_id": self.anima_id, "run_id": self.run_id, "created_at": self.now}
        return batch_rows(entries, new_batch, base)


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
async def journaled_write(runtime: Runtime, run: DreamRun, stats: RunStats) -> AsyncIterator[JournaledWrite]:
    """Run one step of ``run`` in its own transaction (see the module docstring).

    RunLostError if the run lost its lease; ``stats`` is updated only after the commit.
    """
    space = await current_space(runtime)  # before the step's transaction: a new label commits on its own
    async with runtime.unit_of_work() as session:
        await lock_anima(session, run.anima_id)
        await hold_lease(session, run.id)
        ctx = WriteContext(run.org_id, run.anima_id, run.id, runtime.clock(), space)
        step = JournaledWrite(session, ctx, copy.deepcopy(stats))
        yield step
        if step.actions:
            await insert_rows(session, _ACTIONS, ctx.journal_rows(step.actions))
        if step.actions or step.changes_packs:
            await bump_state_version(session, [run.anima_id])
        await save_progress(session, run.id, step.stats, ctx.now)
    vars(stats).update(vars(step.stats))
