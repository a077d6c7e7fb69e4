"""A dream that keeps failing on one anima backs off, then parks the anima in a visible ``failed``
state, and never blocks the other animas (issue 11.2)."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from dreamer.scheduler import Dreamer
from elephantasm.db.migrate import upgrade_async
from elephantasm.db.models import DreamRun
from elephantasm.domain.dreaming import OfflineEngine
from elephantasm.runtime import Runtime, build_runtime
from elephantasm.schemas.animas import AnimaRead
from elephantasm.services.animas import get_anima
from elephantasm.services.dreams import DreamTasks, run_dream
from elephantasm.services.keys import create_key
from elephantasm.settings import Settings
from tests.dreams.helpers import add_events, new_anima, pending_ids, turns, wait_for_dreams
from tests.support.databases import create_database, drop_database


class PoisonedEngine(OfflineEngine):
    """The offline engine, except that it crashes on any chunk holding the word POISON."""

    async def distil(self, events, existing_identity):  # type: ignore[no-untyped-def]
        if any("POISON" in e.content for e in events):
            raise TypeError("can't compare offset-naive and offset-aware datetimes")
        return await super().distil(events, existing_identity)


class Clock:
    """A settable clock, so back-off can be crossed without sleeping."""

    def __init__(self) -> None:
        self.now = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
async def rt(settings: Settings, pg_url: str) -> AsyncIterator[Runtime]:
    """A runtime on a database of its own (the sweep looks at every anima it can see)."""
    url = create_database(pg_url, "backoff")
    await upgrade_async(url)
    s = settings.model_copy(
        update={"dreamer_retry_base_seconds": 60, "dreamer_retry_max_seconds": 600, "dreamer_max_failures": 3}
    )
    runtime = dataclasses.replace(
        build_runtime(s, database_url=url), dream_engine=PoisonedEngine(), clock=Clock(), dream_tasks=DreamTasks()
    )
    try:
        yield runtime
    finally:
        await runtime.close()
        drop_database(url)


async def _runs(rt: Runtime, anima_id: uuid.UUID) -> list[DreamRun]:
    async with rt.read_session() as session:
        stmt = select(DreamRun).where(DreamRun.anima_id == anima_id).order_by(DreamRun.started_at)
        return list((await session.execute(stmt)).scalars())


async def _anima(rt: Runtime, org_id: uuid.UUID, anima_id: uuid.UUID) -> dict:
    """The anima as the API shows it (its dream state included)."""
    async with rt.read_session() as session:
        row = await get_anima(session, org_id, anima_id)
        return AnimaRead.model_validate(row, from_attributes=True).model_dump()


async def _sweep(rt: Runtime, dreamer: Dreamer) -> None:
    await dreamer.sweep()
    await wait_for_dreams(rt.dream_tasks)


async def test_failing_anima_backs_off_then_fails_visibly_without_blocking_others(rt: Runtime) -> None:
    async with rt.unit_of_work() as session:
        org_id = (await create_key(session, rt.secret, f"backoff-{uuid.uuid4().hex[:8]}")).org_id
    clock: Clock = rt.clock  # type: ignore[assignment]
    bad, good = await new_anima(rt, org_id, "bad"), await new_anima(rt, org_id, "good")
    await add_events(rt, org_id, bad, turns(["POISON pill", "ok"]))
    await add_events(rt, org_id, good, turns(["I live in Lisbon.", "Nice."]))
    dreamer = Dreamer(rt)

    await _sweep(rt, dreamer)
    assert [r.status for r in await _runs(rt, good)] == ["completed"] and await pending_ids(rt, good) == set()
    assert [r.status for r in await _runs(rt, bad)] == ["failed"]
    state = await _anima(rt, org_id, bad)
    assert state["dream_status"] == "backoff" and state["dream_failures"] == 1
    assert state["dream_retry_at"] == clock.now + timedelta(seconds=60)

    await _sweep(rt, dreamer)  # inside the back-off: not retried
    assert len(await _runs(rt, bad)) == 1
    for expected_failures, wait in ((2, 60), (3, 120)):
        clock.now += timedelta(seconds=wait)
        await add_events(rt, org_id, good, turns(["More news."], session=f"s{expected_failures}"))
        await _sweep(rt, dreamer)
        assert len(await _runs(rt, bad)) == expected_failures
        assert await pending_ids(rt, good) == set()  # the good anima keeps being dreamt
    state = await _anima(rt, org_id, bad)
    assert state["dream_status"] == "failed" and state["dream_failures"] == 3 and state["dream_retry_at"] is None

    clock.now += timedelta(days=30)
    await _sweep(rt, dreamer)  # parked: never retried automatically
    assert len(await _runs(rt, bad)) == 3 and len(await pending_ids(rt, bad)) == 2

    rt2 = dataclasses.replace(rt, dream_engine=OfflineEngine())  # the cause is fixed; a manual run clears it
    assert (await run_dream(rt2.dreams, org_id, bad)).status == "completed"
    state = await _anima(rt, org_id, bad)
    assert state["dream_status"] == "ok" and state["dream_failures"] == 0 and state["dream_retry_at"] is None
