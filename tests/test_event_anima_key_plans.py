"""Every events read by anima goes through the anima_key indexes.

The events' anima-keyed indexes lead with ``anima_key`` (the anima's compact int8 key), not its
uuid, so a reader that filtered on ``anima_id`` alone would now scan the table. Each statement that
reads an anima's events is planned here over a long-lived anima (50,000 events) and must start from
one of the anima_key indexes: no sequential scan of ``events``, and no sort of the anima's history
where the reader wants time or seq order.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from typing import Any

import pytest
from sqlalchemy import event, text

from elephantasm.db.queries import animas as anima_queries
from elephantasm.db.queries import inspector as inspector_queries
from elephantasm.runtime import Runtime
from elephantasm.services import anima_export, event_copy, event_insert, events
from elephantasm.services.dreams import claims, due
from elephantasm.services.packs import reads, session, sql
from tests.conftest import Tenant

EVENTS, SESSION_LENGTH = 50_000, 500
INDEXES = ("uq_events_anima_seq", "ix_events_anima_occurred", "ix_events_anima_session", "uq_events_anima_dedupe")


@pytest.fixture
async def big(runtime: Runtime, tenant: Tenant) -> uuid.UUID:
    """An anima of the tenant with 50,000 events (100 sessions, every event dedupe-keyed), 200 pending."""
    return await _big_anima(runtime, tenant)


async def _big_anima(runtime: Runtime, tenant: Tenant, n: int = EVENTS) -> uuid.UUID:
    anima = uuid.uuid4()
    async with runtime.unit_of_work() as s:
        await s.execute(
            text(
                "INSERT INTO animas (id, org_id, name, event_seq, distilled_seq, events_indexed) "
                "VALUES (:a, :o, 'big', :n, :d, true)"
            ),
            {"a": anima, "o": tenant.org_id, "n": n, "d": n - 200},
        )
        await s.execute(
            text(
                "INSERT INTO events (id, anima_key, event_type, content, occurred_at, session_id, "
                "dedupe_key, seq, time_indexed) SELECT gen_random_uuid(), (SELECT key FROM animas WHERE id = :a), "
                "'message.in', 'turn ' || i, timestamptz '2026-01-01' + i * interval '1 minute', "
                "'s' || (i / :len), 'k' || i, i, true FROM generate_series(1, :n) i"
            ),
            {"a": anima, "n": n, "len": SESSION_LENGTH},
        )
    async with runtime.engine.connect() as conn:
        await conn.execute(text("ANALYZE events"))
        await conn.execute(text("ANALYZE animas"))
        await conn.commit()
    return anima


async def _many_animas(runtime: Runtime, tenant: Tenant, animas: int = 200, each: int = 500) -> None:
    async with runtime.unit_of_work() as s:
        await s.execute(
            text(
                "INSERT INTO animas (id, org_id, name, event_seq) SELECT gen_random_uuid(), :o, 'a' || i, :n "
                "FROM generate_series(1, :k) i"
            ),
            {"o": tenant.org_id, "n": each, "k": animas},
        )
        await s.execute(
            text(
                "INSERT INTO events (id, anima_key, event_type, content, occurred_at, seq) "
                "SELECT gen_random_uuid(), a.key, 'message.in', 'turn', "
                "timestamptz '2026-01-01' + i * interval '1 minute', i "
                "FROM animas a, generate_series(1, :n) i WHERE a.org_id = :o"
            ),
            {"o": tenant.org_id, "n": each},
        )
    async with runtime.engine.connect() as conn:
        await conn.execute(text("ANALYZE events"))
        await conn.execute(text("ANALYZE animas"))
        await conn.commit()


async def _plan(runtime: Runtime, statement: str, params: Any) -> str:
    async with runtime.engine.connect() as conn:
        # Whether a sequential scan is *cheaper* depends on what else the database holds (under
        # pytest-xdist, on which tests ran before on this worker): when the big anima is most of
        # the table, it is. What is checked is that an anima_key index *can* serve the statement:
        # with sequential scans priced out, one that cannot use one still shows a Seq Scan.
        await conn.execute(text("SET LOCAL enable_seqscan = off"))
        if isinstance(params, dict):
            rows = await conn.execute(text("EXPLAIN " + statement), params)
        else:
            rows = await conn.exec_driver_sql("EXPLAIN " + statement, params)
        return "\n".join(rows.scalars())


EVENT_COLUMN = re.compile(r"\b(events|e)\.")  # the statements name events "events" or "e"


def _event_sorts(plan: str) -> list[str]:
    """The sort keys of the plan's full sorts of events rows (an incremental sort, which orders ties
    only, is not one; nor is a subplan's sort of another table's rows, e.g. a dream chunk lookup)."""
    lines = [line.strip().removeprefix("->  ") for line in plan.splitlines()]
    return [
        key
        for node, key in pairwise(lines)
        if node.startswith("Sort ") and key.startswith("Sort Key:") and EVENT_COLUMN.search(key)
    ]


def _check(plan: str, ordered: bool = True) -> None:
    assert "Seq Scan on events" not in plan, plan
    assert any(ix in plan for ix in INDEXES), plan
    if ordered:  # a full sort of the anima's history is what the index order must spare
        assert not _event_sorts(plan), plan


async def _captured(runtime: Runtime, call: Callable[[], Awaitable[Any]]) -> list[tuple[str, Any]]:
    """The events statements ``call`` runs through the runtime's engine, with their parameters."""
    seen: list[tuple[str, Any]] = []

    def capture(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, many: bool) -> None:
        if "events" in statement and "EXPLAIN" not in statement:
            seen.append((statement, parameters))

    event.listen(runtime.engine.sync_engine, "before_cursor_execute", capture)
    try:
        await call()
    finally:
        event.remove(runtime.engine.sync_engine, "before_cursor_execute", capture)
    assert seen
    return seen


async def test_listings_read_the_anima_key_indexes(runtime: Runtime, tenant: Tenant, big: uuid.UUID) -> None:
    async def listings() -> None:
        async with runtime.unit_of_work() as s:
            rows, cursor = await events.list_events(s, tenant.org_id, events.EventFilter(anima_id=big), 50, None)
            assert [r.seq for r in rows] == list(range(1, 51))
            more, _ = await events.list_events(s, tenant.org_id, events.EventFilter(anima_id=big), 50, cursor)
            assert more[0].seq == 51

    for statement, params in await _captured(runtime, listings):
        if "FROM events" in statement:
            _check(await _plan(runtime, statement, params))


async def test_the_org_wide_listing_never_scans_every_org(
    runtime: Runtime, tenant: Tenant, other_tenant: Tenant, big: uuid.UUID
) -> None:
    await _many_animas(runtime, other_tenant)  # other orgs hold most events, over many animas

    async def listing() -> None:
        async with runtime.unit_of_work() as s:
            rows, _ = await events.list_events(s, tenant.org_id, events.EventFilter(), 10, None)
            assert len(rows) == 10

    (statement, params), *_ = await _captured(runtime, listing)
    _check(await _plan(runtime, statement, params), ordered=False)  # across animas: a top-N of the org's


async def test_the_dreamer_and_purge_read_by_key(runtime: Runtime, tenant: Tenant, big: uuid.UUID) -> None:
    async def dreamer_reads() -> None:
        async with runtime.unit_of_work() as s:
            assert await claims.count_pending(s, tenant.org_id, big, EVENTS) == 200
            assert (await anima_queries.row_counts(s, big))[0] == EVENTS  # what a purge reports

    for statement, params in await _captured(runtime, dreamer_reads):
        _check(await _plan(runtime, statement, params), ordered=False)


async def test_pack_and_dedupe_statements_start_from_the_key(runtime: Runtime, tenant: Tenant, big: uuid.UUID) -> None:
    p = {"org": tenant.org_id, "anima": big}
    now = datetime(2026, 3, 1, tzinfo=UTC)
    _check(await _plan(runtime, f"SELECT e.id FROM events e WHERE {sql.EVENT_PENDING}", p), ordered=False)
    _check(await _plan(runtime, f"SELECT e.id FROM events e WHERE {sql.EVENT_PENDING} ORDER BY e.seq", p))
    gap = p | {"since": now - timedelta(days=1), "until": now, "n": 2000}
    _check(await _plan(runtime, session._GAP_SQL[True].text, gap))
    for head_sql in reads._HEAD_SQL.values():  # with and without the exported snapshot
        head = await _plan(runtime, head_sql.text, p | {"ef": "40"})
        assert "Seq Scan on events" not in head and "ix_events_anima_occurred" in head, head
    dedupe = await _plan(runtime, event_insert._EXISTING, (big, "k7", tenant.org_id))
    assert "uq_events_anima_dedupe" in dedupe, dedupe
    batch = await _plan(runtime, event_copy._EXISTING.text, p | {"animas": [big], "keys": ["k7"]})
    assert "Seq Scan on events" not in batch and "uq_events_anima_dedupe" in batch, batch
    counts = await _plan(
        runtime, inspector_queries._COUNTS_SQL.text, {"org": tenant.org_id, "ids": [big], "cap": 10_000}
    )
    assert "Seq Scan on events" not in counts, counts
    due_plan = await _plan(
        runtime,
        due._DUE_SQL.text,
        {"now": now, "fresh": now, "min_pending": 1, "quiet_before": now, "limit": 10},
    )
    assert "Seq Scan on events" not in due_plan, due_plan


async def test_export_reads_the_time_index(runtime: Runtime, tenant: Tenant, big: uuid.UUID) -> None:
    async def export() -> None:
        async with runtime.read_session() as s:
            n = 0
            async for _ in anima_export.export_records(s, tenant.org_id, big):
                n += 1
                if n > 3:
                    break

    for statement, params in await _captured(runtime, export):
        if "FROM events" in statement:
            plan = await _plan(runtime, statement, params)
            assert "Seq Scan on events" not in plan and "ix_events_anima_occurred" in plan, plan
