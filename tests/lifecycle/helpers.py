"""A fully populated anima (events, memories, knowledge with history, identity versions, packs,
dream runs) for the purge and export/import tests."""

from __future__ import annotations

import uuid
from datetime import timedelta

import httpx
from sqlalchemy import text

from elephantasm.runtime import Runtime
from elephantasm.services.anima_import import embed_parsed, parse_export, write_import
from elephantasm.services.dreams import run_dream
from elephantasm.services.spaces import current_space
from tests.conftest import Tenant
from tests.dreams.helpers import T0, add_events, turns

CHAT = [
    "Hi! I live in Paris and my favorite color is teal.",
    "Nice to meet you. Paris is lovely; teal is a calm colour.",
    "Please remember I prefer trains over planes.",
    "Noted: trains over planes. I will plan around rail routes.",
]
LATER = [
    "Update: I moved to Berlin last week, and my favorite color is now orange.",
    "Got it, Berlin and orange from now on!",
]


async def populated_anima(client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, name: str = "full") -> str:
    """An anima with two dream runs (so knowledge is superseded), an identity, a served pack."""
    r = await client.post(
        "/api/animas", json={"name": name, "description": "d", "meta": {"team": "x"}}, headers=tenant.headers
    )
    assert r.status_code == 201, r.text
    anima_id = r.json()["id"]
    await add_events(runtime, tenant.org_id, uuid.UUID(anima_id), turns(CHAT))
    assert (await run_dream(runtime.dreams, tenant.org_id, uuid.UUID(anima_id), trigger="test")).status == "completed"
    later = turns(LATER, session="s2", start=T0 + timedelta(days=3))
    await add_events(runtime, tenant.org_id, uuid.UUID(anima_id), later)
    assert (await run_dream(runtime.dreams, tenant.org_id, uuid.UUID(anima_id), trigger="test")).status == "completed"
    r = await client.get(
        f"/api/animas/{anima_id}/memory-packs/latest", params={"query": "colour"}, headers=tenant.headers
    )
    assert r.status_code == 200 and r.json() is not None, r.text
    await runtime.pack_state.recalls.flush()  # its recalls written now, not in the middle of a test
    return anima_id


_ANIMA_TABLES = text("""
SELECT table_name FROM information_schema.columns
WHERE table_schema = 'public' AND column_name = 'anima_id' ORDER BY table_name
""")


# anima id → its key, as first seen: events carry only the key, and a purged
# anima's events are counted by the key it had.
_KEYS: dict[uuid.UUID, int] = {}


async def rows_of(runtime: Runtime, anima_id: str) -> dict[str, int]:
    """Rows that carry ``anima_id``, per table (every table with an ``anima_id`` column, and animas),
    and the events that carry its key."""
    a = uuid.UUID(anima_id)
    counts: dict[str, int] = {}
    async with runtime.read_session() as session:
        for table in (await session.execute(_ANIMA_TABLES)).scalars():
            n = (await session.execute(text(f"SELECT count(*) FROM {table} WHERE anima_id = :a"), {"a": a})).scalar()
            counts[table] = int(n or 0)
        key = (await session.execute(text("SELECT key FROM animas WHERE id = :a"), {"a": a})).scalar()
        key = _KEYS.setdefault(a, key) if key is not None else _KEYS.get(a)
        n = (await session.execute(text("SELECT count(*) FROM events WHERE anima_key = :k"), {"k": key})).scalar()
        counts["events"] = int(n or 0)
        counts["animas"] = int(
            (await session.execute(text("SELECT count(*) FROM animas WHERE id = :a"), {"a": a})).scalar() or 0
        )
    return counts


async def import_anima(runtime: Runtime, org_id: uuid.UUID, lines: list[str], name: str | None = None) -> uuid.UUID:
    """Import an export as a new anima of ``org_id``, as ``POST /api/animas/import`` does."""
    parsed = parse_export(lines, runtime.settings, runtime.clock())
    vectors = await embed_parsed(runtime.embedder, parsed)
    space = await current_space(runtime)
    async with runtime.unit_of_work() as session:
        return await write_import(session, org_id, parsed, vectors, name, space)
