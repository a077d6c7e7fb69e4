"""A memory stores the content its writer gave it, and every reader sees exactly that.

The offline engine's content is the ``"speaker: text"`` lines of the memory's events in time order
(:func:`~elephantasm.domain.dreaming.offline.memory_from_group`, the one place that renders it):
the API's get, list and search, export, forget's redaction and full-text search all see it.
"""

from __future__ import annotations

import json
import uuid
from datetime import timedelta

import httpx
import numpy as np
from sqlalchemy import text

from elephantasm.domain import turn_vectors as tv
from elephantasm.domain.dreaming.grouping import event_order
from elephantasm.domain.dreaming.offline import memory_from_group
from elephantasm.runtime import Runtime
from elephantasm.services.anima_export import export_lines
from elephantasm.services.dreams import run_dream
from elephantasm.services.dreams.memories import get_memory
from elephantasm.services.dreams.writer import to_inputs
from elephantasm.services.forget import forget, unserve_old_text
from tests.conftest import Tenant
from tests.dreams.helpers import T0, add_events, new_anima

# Speakers of every kind the rendering knows: authors, role labels (any case), a role of its own,
# event types without a role; a summary standing in for empty content; non-ASCII text.
SPECS = [
    {"event_type": "message.in", "role": "user", "content": "I moved to Lisbon last spring, café near Alfama."},
    {"event_type": "message.out", "role": "Assistant", "content": "Lisbon! Do you like the trams?"},
    {"event_type": "message.in", "role": "Human", "content": "Yes, tram 28 every morning to my office."},
    {"event_type": "tool.call", "content": "weather(lisbon)"},
    {"event_type": "tool.result", "role": "tool", "content": "sunny, 24°C"},
    {"event_type": "message.in", "author": "Maria", "role": "user", "content": "My sister Jana visits in May."},
    {"event_type": "message.out", "role": "narrator", "content": "A pause."},
    {"event_type": "system", "content": "session resumed", "summary": "resumed"},
]

MORE = [
    ("My cat is called Miso and hates the vacuum cleaner.", "Poor Miso!"),
    ("I bought a red bicycle for the hills of Porto yesterday.", "Enjoy the rides."),
]


async def _dreamed(runtime: Runtime, tenant: Tenant) -> tuple[uuid.UUID, dict[uuid.UUID, str]]:
    """An anima with ``SPECS`` dreamed offline, and each memory's content as the offline engine renders it."""
    anima = await new_anima(runtime, tenant.org_id, "rendered")
    specs = [{**s, "session_id": "s1", "occurred_at": T0 + timedelta(minutes=i)} for i, s in enumerate(SPECS)]
    # Two more, unlike each other (no curation merge): more memories to edit, merge and forget.
    for n, (said, answer) in enumerate(MORE, start=1):
        specs += [
            {
                "event_type": "message.in",
                "role": "user",
                "content": said,
                "session_id": f"s{n + 1}",
                "occurred_at": T0 + timedelta(days=n),
            },
            {
                "event_type": "message.out",
                "role": "assistant",
                "content": answer,
                "session_id": f"s{n + 1}",
                "occurred_at": T0 + timedelta(days=n, minutes=1),
            },
        ]
    events = await add_events(runtime, tenant.org_id, anima, specs)
    run = await run_dream(runtime.dreams, tenant.org_id, anima)
    assert run.status == "completed", run.error
    by_id = {e.id: e for e in to_inputs(events)}
    async with runtime.engine.connect() as conn:
        rows = (await conn.execute(text("SELECT id, event_ids FROM memories WHERE anima_id = :a"), {"a": anima})).all()
    expected = {r.id: memory_from_group(sorted((by_id[e] for e in r.event_ids), key=event_order)).content for r in rows}
    return anima, expected


async def _stored(runtime: Runtime, anima: uuid.UUID) -> list:
    sql = text("SELECT id, content, fts::text AS fts FROM memories WHERE anima_id = :a ORDER BY id")
    async with runtime.engine.connect() as conn:
        return list((await conn.execute(sql, {"a": anima})).all())


async def test_offline_memories_store_their_content_and_every_reader_sees_it(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    anima, expected = await _dreamed(runtime, tenant)
    rows = await _stored(runtime, anima)
    assert rows and {r.id: r.content for r in rows} == expected
    assert any("Maria: " in c for c in expected.values()) and any("Tool call: " in c for c in expected.values())

    one = rows[0].id
    got = (await client.get(f"/api/memories/{one}", headers=tenant.headers)).json()
    assert got["content"] == expected[one]
    listed = (await client.get("/api/memories/", params={"anima_id": str(anima)}, headers=tenant.headers)).json()
    assert {uuid.UUID(m["id"]): m["content"] for m in listed["items"]} == expected
    found = await client.post(
        "/api/memories/search/semantic", json={"anima_id": str(anima), "query": "Lisbon tram"}, headers=tenant.headers
    )
    assert found.status_code == 200 and found.json()
    assert all(m["content"] == expected[uuid.UUID(m["id"])] for m in found.json())

    async with runtime.read_session() as session:
        lines = [line async for line in export_lines(session, tenant.org_id, anima)]
    records = [json.loads(x) for x in lines if json.loads(x)["kind"] == "memory"]
    assert {uuid.UUID(r["id"]): r["content"] for r in records} == expected

    # Full text ranks on the summary and the whole exchange.
    sql = text(
        "SELECT m.id, m.fts = strip(to_tsvector('english', m.summary || ' ' || CAST(:c AS text))) AS same "
        "FROM memories m WHERE m.id = :id"
    )
    async with runtime.engine.connect() as conn:
        for mid, content in expected.items():
            assert (await conn.execute(sql, {"id": mid, "c": content})).one().same


async def test_forgetting_scrubs_the_turn_lines_the_blob_holds(runtime: Runtime, tenant: Tenant) -> None:
    """Blobs hold each fact-bearing turn's line verbatim: a forgotten memory's text, so forgetting
    drops the blob with the summary, content and embedding."""
    anima, _ = await _dreamed(runtime, tenant)
    sql = text("SELECT id, turn_vectors FROM memories WHERE anima_id = :a AND turn_vectors IS NOT NULL ORDER BY id")
    async with runtime.engine.connect() as conn:
        victim, blob = (await conn.execute(sql, {"a": anima})).first()
    [best] = tv.best_turns(np.ones(4096, dtype=np.float32), [blob])  # any query longer than the blob's vectors
    assert best is not None and isinstance(best[1], str)  # the turn's text, not only its vector
    async with runtime.unit_of_work() as session:
        await forget(session, tenant.org_id, "memory", victim, runtime.clock(), ())
    async with runtime.engine.connect() as conn:
        left = text("SELECT turn_vectors FROM memories WHERE id = :id")
        assert (await conn.execute(left, {"id": victim})).scalar_one() is None


async def test_an_edit_withdraws_the_text_it_replaces(runtime: Runtime, tenant: Tenant) -> None:
    """A PATCH of a memory's text withdraws every served copy of the old text: its content and each
    of its lines."""
    anima, expected = await _dreamed(runtime, tenant)
    rendered = (await _stored(runtime, anima))[0].id
    async with runtime.unit_of_work() as session:
        current = await get_memory(session, tenant.org_id, rendered)
        done = await unserve_old_text(session, tenant.org_id, current, runtime.forget_hooks)
    lines = [line for line in expected[rendered].splitlines() if len(line.split()) >= 3]
    assert lines and expected[rendered] in done.texts and set(lines) <= set(done.texts)
