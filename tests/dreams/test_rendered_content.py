"""A memory renders its content from its events instead of storing a copy.

Every reader must see what the offline engine wrote (``"speaker: text"`` lines of the memory's
events in time order): the API's get, list and search, export, forget's redaction, full-text
search and packs. The expected text here is the old writer's own output
(:func:`~elephantasm.domain.dreaming.offline.memory_from_group` over the memory's events).
"""

from __future__ import annotations

import json
import uuid
from datetime import timedelta

import httpx
from sqlalchemy import text

from elephantasm.domain import turn_vectors as tv
from elephantasm.domain.dreaming.grouping import event_order
from elephantasm.domain.dreaming.offline import memory_from_group
from elephantasm.runtime import Runtime
from elephantasm.services.anima_export import export_lines
from elephantasm.services.dreams import run_dream
from elephantasm.services.dreams.memories import get_memory
from elephantasm.services.dreams.writer import to_inputs
from elephantasm.services.forget import forget_memory, unserve_old_text
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
    """An anima with ``SPECS`` dreamed offline, and each memory's content as the old writer wrote it."""
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
    run = await run_dream(runtime, tenant.org_id, anima)
    assert run.status == "completed", run.error
    by_id = {e.id: e for e in to_inputs(events)}
    async with runtime.engine.connect() as conn:
        rows = (await conn.execute(text("SELECT id, event_ids FROM memories WHERE anima_id = :a"), {"a": anima})).all()
    expected = {r.id: memory_from_group(sorted((by_id[e] for e in r.event_ids), key=event_order)).content for r in rows}
    return anima, expected


async def _stored(runtime: Runtime, anima: uuid.UUID) -> list:
    sql = text("SELECT id, content, content_rendered, fts::text AS fts FROM memories WHERE anima_id = :a ORDER BY id")
    async with runtime.engine.connect() as conn:
        return list((await conn.execute(sql, {"a": anima})).all())


async def test_offline_memories_store_no_content_and_every_reader_renders_it(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    anima, expected = await _dreamed(runtime, tenant)
    rows = await _stored(runtime, anima)
    assert rows and all(r.content is None and r.content_rendered for r in rows)
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

    # Full text ranks on the whole exchange, as the generated column did.
    sql = text(
        "SELECT m.id, m.fts = strip(to_tsvector('english', m.summary || ' ' || CAST(:c AS text))) AS same "
        "FROM memories m WHERE m.id = :id"
    )
    async with runtime.engine.connect() as conn:
        for mid, content in expected.items():
            assert (await conn.execute(sql, {"id": mid, "c": content})).one().same


async def test_edits_forget_and_merges_keep_the_text_honest(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    anima, expected = await _dreamed(runtime, tenant)
    first, survivor, absorbed, victim, *_ = (r.id for r in await _stored(runtime, anima))

    # A new summary: the content stays rendered, full text follows the summary.
    r = await client.patch(f"/api/memories/{first}", json={"summary": "zeppelin"}, headers=tenant.headers)
    assert r.status_code == 200 and r.json()["content"] == expected[first]
    (row,) = [x for x in await _stored(runtime, anima) if x.id == first]
    async with runtime.engine.connect() as conn:
        fts = text("SELECT strip(to_tsvector('english', 'zeppelin ' || CAST(:c AS text)))::text")
        assert row.content_rendered and row.fts == (await conn.execute(fts, {"c": expected[first]})).scalar_one()
    # A content set to null is null (not rendered again); a new content is stored.
    r = await client.patch(f"/api/memories/{first}", json={"content": None}, headers=tenant.headers)
    assert r.status_code == 200 and r.json()["content"] is None
    r = await client.patch(f"/api/memories/{first}", json={"content": "User: rewritten"}, headers=tenant.headers)
    assert r.json()["content"] == "User: rewritten"
    (row,) = [x for x in await _stored(runtime, anima) if x.id == first]
    assert (row.content, row.content_rendered) == ("User: rewritten", False)

    # A merge changes a rendered memory's events: it stores the text it had first.
    async with runtime.engine.begin() as conn:
        await conn.execute(
            text(
                "UPDATE memories SET event_ids = (SELECT array_agg(DISTINCT e ORDER BY e) FROM memories y, "
                "unnest(y.event_ids) e WHERE y.id IN (:s, :m)) WHERE id = :s"
            ),
            {"s": survivor, "m": absorbed},
        )
    (row,) = [x for x in await _stored(runtime, anima) if x.id == survivor]
    assert (row.content, row.content_rendered) == (expected[survivor], False)

    # Forgetting a rendered memory: its text was redacted from served copies, nothing renders it now.
    async with runtime.unit_of_work() as session:
        done = await forget_memory(session, tenant.org_id, victim, runtime.clock())
    assert expected[victim] in done.texts and done.memory_ids == [victim]
    async with runtime.engine.connect() as conn:
        gone = (
            await conn.execute(
                text(
                    "SELECT content, content_rendered, fts::text AS fts, "
                    "CASE WHEN content_rendered THEN memory_text(anima_id, event_ids) ELSE content END AS seen "
                    "FROM memories WHERE id = :id"
                ),
                {"id": victim},
            )
        ).one()
    assert (gone.content, gone.content_rendered, gone.seen, gone.fts) == (None, False, None, "")
    assert (await client.get(f"/api/memories/{victim}", headers=tenant.headers)).status_code == 404


async def test_content_that_is_not_its_events_rendering_stays_stored(runtime: Runtime, tenant: Tenant) -> None:
    anima = await new_anima(runtime, tenant.org_id, "stored")
    elsewhere = await new_anima(runtime, tenant.org_id, "elsewhere")
    (other,) = await add_events(
        runtime,
        tenant.org_id,
        elsewhere,
        [{"event_type": "message.in", "role": "user", "content": "elsewhere", "occurred_at": T0}],
    )
    (event,) = await add_events(
        runtime,
        tenant.org_id,
        anima,
        [{"event_type": "message.in", "role": "user", "content": "hello there", "occurred_at": T0}],
    )
    sql = text(
        "INSERT INTO memories (id, org_id, anima_id, summary, content, event_ids) "
        "VALUES (:id, :o, :a, :s, :c, CAST(:e AS uuid[])) RETURNING content, content_rendered"
    )
    cases = [
        ("s", "User: hello there", [event.id], (None, True)),  # the rendering: not stored
        ("s", "The user greeted me.", [event.id], ("The user greeted me.", False)),  # an LLM's wording
        ("s", "User: hello there\n", [event.id], ("User: hello there\n", False)),  # one byte more
        ("s", "User: hello there", [uuid.uuid4()], ("User: hello there", False)),  # events not found
        ("", "User: hello there", [event.id], ("User: hello there", False)),  # no summary to show instead
    ]
    async with runtime.engine.begin() as conn:
        for summary, content, ids, want in cases:
            params = {"id": uuid.uuid4(), "o": tenant.org_id, "a": anima, "s": summary, "c": content, "e": ids}
            assert tuple((await conn.execute(sql, params)).one()) == want, (summary, content)
        # Another anima's event is never rendered into this anima's memory.
        params = {"id": uuid.uuid4(), "o": tenant.org_id, "a": anima, "s": "s", "c": "User: elsewhere", "e": [other.id]}
        assert tuple((await conn.execute(sql, params)).one()) == ("User: elsewhere", False)


async def test_forgetting_scrubs_the_turn_lines_the_blob_holds(runtime: Runtime, tenant: Tenant) -> None:
    """Format-2 blobs hold each fact-bearing turn's line verbatim: a forgotten memory's text, kept
    nowhere else in its row, so forgetting drops the blob with the summary, content and embedding."""
    anima, _ = await _dreamed(runtime, tenant)
    sql = text("SELECT id, turn_vectors FROM memories WHERE anima_id = :a AND turn_vectors IS NOT NULL ORDER BY id")
    async with runtime.engine.connect() as conn:
        victim, blob = (await conn.execute(sql, {"a": anima})).first()
    decoded = tv.decode(blob)
    assert decoded is not None and any(isinstance(line, str) for line in decoded[1])  # text, not only vectors
    async with runtime.unit_of_work() as session:
        await forget_memory(session, tenant.org_id, victim, runtime.clock())
    async with runtime.engine.connect() as conn:
        left = text("SELECT turn_vectors FROM memories WHERE id = :id")
        assert (await conn.execute(left, {"id": victim})).scalar_one() is None


async def test_an_edit_withdraws_the_rendered_text_it_replaces(runtime: Runtime, tenant: Tenant) -> None:
    """A PATCH of a rendered memory's text withdraws every served copy of the old text: the texts it
    looks for are the rendered content's lines, not the NULL the row stores."""
    anima, expected = await _dreamed(runtime, tenant)
    rendered = next(r.id for r in await _stored(runtime, anima) if r.content_rendered)
    async with runtime.unit_of_work() as session:
        current = await get_memory(session, tenant.org_id, rendered)
        done = await unserve_old_text(runtime, session, tenant.org_id, current)
    lines = [line for line in expected[rendered].splitlines() if len(line.split()) >= 3]
    assert lines and expected[rendered] in done.texts and set(lines) <= set(done.texts)
