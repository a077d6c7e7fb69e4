"""A session-filtered event listing reads the session's own index range, in time order.

``ix_events_anima_session`` is (anima_key, session_id, occurred_at): a page of a late session of a
long-lived anima reads that session's entries only, never the anima's whole timeline before it, and
sorts nothing however long the session is (without ``occurred_at`` in the index, every page
sorted the whole session).
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import event, text

from elephantasm.runtime import Runtime
from elephantasm.services.events import EventFilter, list_events
from tests.conftest import Tenant

EVENTS, SESSION_LENGTH = 50_000, 500


async def _big_anima(runtime: Runtime, tenant: Tenant) -> uuid.UUID:
    anima = uuid.uuid4()
    async with runtime.unit_of_work() as session:
        await session.execute(
            text("INSERT INTO animas (id, org_id, name, event_seq, events_indexed) VALUES (:a, :o, 'big', :n, true)"),
            {"a": anima, "o": tenant.org_id, "n": EVENTS},
        )
        await session.execute(
            text(
                "INSERT INTO events (id, anima_key, event_type, content, occurred_at, session_id, seq, time_indexed) "
                "SELECT gen_random_uuid(), (SELECT key FROM animas WHERE id = :a), 'message.in', 'turn ' || i, "
                "timestamptz '2026-01-01' + i * interval '1 minute', 's' || (i / :len), i, true "
                "FROM generate_series(1, :n) i"
            ),
            {"a": anima, "n": EVENTS, "len": SESSION_LENGTH},
        )
    async with runtime.engine.connect() as conn:
        await conn.execute(text("ANALYZE events"))
        await conn.commit()
    return anima


async def test_a_late_session_is_listed_from_the_session_index(runtime: Runtime, tenant: Tenant) -> None:
    anima = await _big_anima(runtime, tenant)
    late = f"s{EVENTS // SESSION_LENGTH - 1}"
    seen: list[tuple[str, Any]] = []

    def capture(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, many: bool) -> None:
        if "FROM events" in statement:
            seen.append((statement, parameters))

    event.listen(runtime.engine.sync_engine, "before_cursor_execute", capture)
    try:
        async with runtime.unit_of_work() as session:
            rows, cursor = await list_events(
                session, tenant.org_id, EventFilter(anima_id=anima, session_id=late), 50, None
            )
            assert [r.seq for r in rows] == list(range(EVENTS - SESSION_LENGTH, EVENTS - SESSION_LENGTH + 50))
            more, _ = await list_events(
                session, tenant.org_id, EventFilter(anima_id=anima, session_id=late), 50, cursor
            )
            assert more[0].seq == rows[-1].seq + 1
    finally:
        event.remove(runtime.engine.sync_engine, "before_cursor_execute", capture)
    statement, parameters = seen[0]
    async with runtime.engine.connect() as conn:
        plan = "\n".join((await conn.exec_driver_sql("EXPLAIN " + statement, parameters)).scalars())
    assert "ix_events_anima_session" in plan, plan
