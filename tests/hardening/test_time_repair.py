"""Migration 0006 repairs event times stored before the window was enforced (issue 11.2): an
``-infinity`` or year-9999 ``occurred_at`` no longer poisons the dreamer or the current session."""

from __future__ import annotations

import uuid

from elephantasm.db.migrate import upgrade_async
from tests.support.databases import connect, create_database, drop_database


async def test_out_of_window_event_times_are_repaired_and_kept_in_meta(pg_url: str) -> None:
    url = create_database(pg_url, "repair")
    try:
        await upgrade_async(url, "0003")
        conn = await connect(url)
        try:
            org, anima = uuid.uuid4(), uuid.uuid4()
            await conn.execute("INSERT INTO orgs (id, name) VALUES ($1, 'repair')", org)
            await conn.execute(
                "INSERT INTO animas (id, org_id, name, last_event_at) VALUES ($1, $2, 'a', 'infinity')", anima, org
            )
            bad = {at: uuid.uuid4() for at in ("-infinity", "9999-12-31 23:59:59-14", "0001-01-01 00:00:00+14")}
            good = uuid.uuid4()
            for at, event_id in [*bad.items(), ("2026-01-02 03:04:05+00", good)]:
                await conn.execute(
                    "INSERT INTO events (id, org_id, anima_id, event_type, content, occurred_at, created_at,"
                    " updated_at)"
                    " VALUES ($1, $2, $3, 'system', 'x', $4::text::timestamptz, '2026-03-01 00:00:00+00', now())",
                    event_id,
                    org,
                    anima,
                    at,
                )
            await upgrade_async(url)
            rows = {
                r["id"]: r
                for r in await conn.fetch(
                    "SELECT id, occurred_at::text AS at, meta->>'original_occurred_at' AS original FROM events"
                )
            }
            for event_id in bad.values():
                assert rows[event_id]["at"] == "2026-03-01 00:00:00+00" and rows[event_id]["original"]
            assert rows[bad["-infinity"]]["original"] == "-infinity"
            assert rows[good]["at"] == "2026-01-02 03:04:05+00" and rows[good]["original"] is None
            head = await conn.fetchrow(
                "SELECT last_event_at::text AS at, dream_status FROM animas WHERE id = $1", anima
            )
            assert head["at"] == "2026-03-01 00:00:00+00" and head["dream_status"] == "ok"
        finally:
            await conn.close()
    finally:
        drop_database(url)
