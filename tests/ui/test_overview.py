"""The inspector's per-anima counts: exact, org-scoped, and bounded when a cap is given."""

from __future__ import annotations

from sqlalchemy import func, select

from elephantasm.db.models import Memory
from elephantasm.runtime import Runtime
from elephantasm.services.inspector import anima_counts
from tests.ui.conftest import World
from tests.ui.seed import CONVERSATIONS


async def test_counts_are_exact_scoped_and_capped(runtime: Runtime, world: World) -> None:
    s = world.seeded
    async with runtime.read_session() as session:
        exact = (await anima_counts(session, world.owner.org_id, [s.anima_id]))[s.anima_id]
        capped = (await anima_counts(session, world.owner.org_id, [s.anima_id], cap=2))[s.anima_id]
        foreign = await anima_counts(session, world.other.org_id, [s.anima_id, world.other_seeded.anima_id])
        live = (
            await session.execute(
                select(func.count())
                .select_from(Memory)
                .where(Memory.anima_id == s.anima_id, Memory.deleted_at.is_(None), Memory.merged_into.is_(None))
            )
        ).scalar_one()
    turns = sum(len(texts) for _, texts in CONVERSATIONS) + 2
    assert (exact.events, exact.pending, exact.dream_runs) == (turns, 2, len(CONVERSATIONS))
    assert exact.memories == live >= 1 and exact.knowledge >= 1
    assert exact.identity_version == s.identity_versions
    assert (capped.events, capped.pending, capped.dream_runs) == (2, 2, 2) and capped.memories <= 2
    assert set(foreign) == {world.other_seeded.anima_id}  # another org's anima is simply absent
