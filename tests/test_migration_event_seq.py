"""Migration 0011 converts per-event claim marks into seqs, a watermark and chunks, and back."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from elephantasm.db.migrate import downgrade, upgrade
from elephantasm.services import event_state
from tests.support.databases import connect, database_before

T = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
ORG, ANIMA, EMPTY, DONE_RUN, LIVE_RUN = (uuid.uuid4() for _ in range(5))
# name → (created minutes after T, distilled_at, claimed_by); occurred_at is irrelevant to the order.
EVENTS = {
    "late-created, distilled first": (30, T + timedelta(hours=1), DONE_RUN),
    "distilled first too": (31, T + timedelta(hours=1), DONE_RUN),
    "early-created, distilled later": (1, T + timedelta(hours=2), None),
    "claimed, not distilled": (40, None, LIVE_RUN),
    "pending, back-dated": (50, None, None),
}


@pytest.fixture
def old_db(pg_url: str) -> Iterator[tuple[str, str]]:
    """A database at the revision before 0011, and that revision."""
    with database_before(pg_url, "0011", "seq") as db:
        yield db


async def _seed(url: str) -> dict[str, uuid.UUID]:
    conn = await connect(url)
    ids = {name: uuid.uuid4() for name in EVENTS}
    try:
        await conn.execute("INSERT INTO orgs (id, name) VALUES ($1, 'o')", ORG)
        for anima in (ANIMA, EMPTY):
            await conn.execute("INSERT INTO animas (id, org_id, name) VALUES ($1, $2, 'a')", anima, ORG)
        for run, status in ((DONE_RUN, "completed"), (LIVE_RUN, "running")):
            await conn.execute(
                "INSERT INTO dream_runs (id, org_id, anima_id, status, trigger, engine) "
                "VALUES ($1, $2, $3, $4, 'test', 'offline')",
                run,
                ORG,
                ANIMA,
                status,
            )
        for name, (minutes, distilled, claimed) in EVENTS.items():
            created = T + timedelta(minutes=minutes)
            await conn.execute(
                "INSERT INTO events (id, org_id, anima_id, event_type, content, occurred_at, created_at, updated_at,"
                " distilled_at, claimed_by, claimed_at) VALUES ($1, $2, $3, 'system', $4, $5, $6, $6, $7, $8, $9)",
                ids[name],
                ORG,
                ANIMA,
                f"about the {name} kettle",
                T - timedelta(days=minutes),
                created,
                distilled,
                claimed,
                created if claimed else None,
            )
    finally:
        await conn.close()
    return ids


async def test_upgrade_numbers_distilled_events_first_and_downgrade_restores_the_marks(
    old_db: tuple[str, str],
) -> None:
    url, before = old_db
    ids = await _seed(url)
    await asyncio.to_thread(upgrade, url, "0011")  # not head: 0012 drops the fts column checked here
    conn = await connect(url)
    try:
        # At 0011 an event still names its anima (0022 leaves only the key).
        rows = await conn.fetch(
            f"SELECT e.id, e.seq, {event_state.distilled_at('e', 'e.anima_id')} AS at, "
            "e.fts @@ to_tsquery('english', 'kettle') AS matched FROM events e"
        )
        animas = {
            r["id"]: (r["event_seq"], r["distilled_seq"])
            for r in await conn.fetch("SELECT id, event_seq, distilled_seq FROM animas")
        }
        chunks = [
            tuple(r)
            for r in await conn.fetch(
                "SELECT first_seq, last_seq, run_id, distilled_at FROM dream_chunks ORDER BY first_seq"
            )
        ]
        kind = await conn.fetchval(
            "SELECT attgenerated FROM pg_attribute WHERE attrelid = 'events'::regclass AND attname = 'fts'"
        )
    finally:
        await conn.close()
    seq = {r["id"]: r["seq"] for r in rows}
    assert [seq[ids[n]] for n in EVENTS] == [1, 2, 3, 4, 5]
    assert {r["id"]: r["at"] for r in rows} == {ids[n]: d for n, (_, d, _) in EVENTS.items()}
    assert all(r["matched"] for r in rows) and kind == b"s"  # stored for every event, distilled or not
    assert animas == {ANIMA: (5, 3), EMPTY: (0, 0)}  # the claimed one stays pending: above the watermark
    assert chunks == [(1, 2, DONE_RUN, T + timedelta(hours=1)), (3, 3, None, T + timedelta(hours=2))]

    await asyncio.to_thread(downgrade, url, before)
    conn = await connect(url)
    try:
        back = {
            r["id"]: (r["distilled_at"], r["claimed_by"])
            for r in await conn.fetch("SELECT id, distilled_at, claimed_by FROM events")
        }
        pending_index = await conn.fetchval("SELECT count(*) FROM pg_indexes WHERE indexname = 'ix_events_pending'")
    finally:
        await conn.close()
    # Distilled times come back exactly; a released or converted claim is not a claim any more
    # (the live run's claim was kept only as pending), the completed run's stays on record.
    assert back == {ids[n]: (d, DONE_RUN if d and c else None) for n, (_, d, c) in EVENTS.items()}
    assert pending_index == 1
