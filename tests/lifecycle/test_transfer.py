"""Export one anima as JSON lines and import it into another org or server (issue 11, item 4).

Round trip: export → import into a second org → export again gives the same lines but for ids.
"""

from __future__ import annotations

import json
import re
import uuid
from datetime import UTC, datetime
from pathlib import Path

import httpx
from sqlalchemy import text

from elephantasm.runtime import Runtime
from elephantasm.services.anima_export import export_lines
from elephantasm.services.dreams import run_dream
from tests.conftest import Tenant
from tests.dreams.helpers import add_events, turns
from tests.hardening.helpers import retrailed
from tests.lifecycle.helpers import import_anima, populated_anima, rows_of
from tests.support.cli import run_cli

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def normalised(lines: list[str]) -> list[str]:
    """Each id replaced by its order of first appearance (ids differ between servers, order does not)."""
    seen: dict[str, str] = {}
    return [_UUID.sub(lambda m: seen.setdefault(m.group(0), f"<id{len(seen)}>"), line) for line in lines]


async def export(runtime: Runtime, org_id: uuid.UUID, anima_id: str) -> list[str]:
    async with runtime.read_session() as session:
        return [line async for line in export_lines(session, org_id, uuid.UUID(anima_id))]


async def test_round_trip_into_another_org(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, other_tenant: Tenant
) -> None:
    source = await populated_anima(client, runtime, tenant)
    first = await export(runtime, tenant.org_id, source)
    kinds = [json.loads(line)["kind"] for line in first]
    assert kinds[0] == "anima" and {"event", "memory", "knowledge", "identity", "identity_version"} <= set(kinds)
    assert any(json.loads(x).get("superseded_by") for x in first)  # history travels too
    assert any(json.loads(x).get("recall_count") for x in first)  # so does recall state (memory_recalls)

    copy = str(await import_anima(runtime, other_tenant.org_id, first))
    second = await export(runtime, other_tenant.org_id, copy)
    # The same lines but for ids; the trailers count the same lines (their checksums cover the ids).
    assert normalised(second[:-1]) == normalised(first[:-1])
    assert json.loads(second[-1])["counts"] == json.loads(first[-1])["counts"]
    assert source not in "".join(second) and copy in second[0]
    counts, copied = await rows_of(runtime, source), await rows_of(runtime, copy)
    for table in (
        "events",
        "memories",
        "memory_recalls",
        "knowledge",
        "knowledge_memories",
        "identities",
        "identity_history",
    ):
        assert copied[table] == counts[table], table

    # The copy serves the same pack text as the original (same state, query, as_of).
    as_of = datetime(2026, 6, 1, 12, tzinfo=UTC).isoformat()
    packs = []
    for who, anima in ((tenant, source), (other_tenant, copy)):
        r = await client.post(
            "/api/packs/compile", json={"anima_id": anima, "query": "colour", "as_of": as_of}, headers=who.headers
        )
        assert r.status_code == 200, r.text
        packs.append(r.json()["context"])
    assert packs[0] == packs[1] and "orange" in packs[0].lower()
    # Nothing of the copy is visible to the source org, nor the reverse.
    assert (await client.get(f"/api/animas/{copy}", headers=tenant.headers)).status_code == 404


async def test_http_export_and_import(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, other_tenant: Tenant
) -> None:
    source = await populated_anima(client, runtime, tenant)
    r = await client.get(f"/api/animas/{source}/export", headers=tenant.headers)
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/x-ndjson")
    assert r.text.splitlines(keepends=True) == await export(runtime, tenant.org_id, source)
    assert (await client.get(f"/api/animas/{source}/export", headers=other_tenant.headers)).status_code == 404

    r = await client.post(
        "/api/animas/import",
        content=r.content,
        params={"name": "moved"},
        headers=other_tenant.headers | {"content-type": "application/x-ndjson"},
    )
    assert r.status_code == 201, r.text
    assert r.json()["name"] == "moved" and r.json()["id"] != source
    again = await client.get(f"/api/animas/{r.json()['id']}/export", headers=other_tenant.headers)
    original = normalised(await export(runtime, tenant.org_id, source))
    copied = normalised(again.text.splitlines(keepends=True))
    assert copied[1:-1] == original[1:-1] and json.loads(copied[0])["name"] == "moved"


async def test_a_bad_import_writes_nothing_and_names_the_line(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, other_tenant: Tenant
) -> None:
    source = await populated_anima(client, runtime, tenant)
    lines = (await export(runtime, tenant.org_id, source))[:-1]  # each case gets a trailer of its own
    before = (await client.get("/api/animas", headers=other_tenant.headers)).json()["items"]
    memory_line = next(i for i, x in enumerate(lines) if json.loads(x)["kind"] == "memory")
    broken = json.loads(lines[memory_line])
    broken["event_ids"] = [str(uuid.uuid4())]
    deep: dict = {}
    for _ in range(200):
        deep = {"d": deep}
    cases = {
        "dangling": [*lines[:memory_line], json.dumps(broken), *lines[memory_line + 1 :]],
        "no header": lines[1:],
        "unknown kind": [lines[0], json.dumps({"kind": "secret"})],
        "bad event": [lines[0], json.dumps(json.loads(lines[1]) | {"event_type": "message.sideways"})],
        "not json": [lines[0], "{nope"],
        "deep meta": [lines[0], *lines[1:memory_line], json.dumps(json.loads(lines[memory_line]) | {"meta": deep})],
    }
    for case, body in cases.items():
        r = await client.post(
            "/api/animas/import",
            content=body[0] + "\n" + body[1] if case == "not json" else retrailed(body),
            headers=other_tenant.headers,
        )
        assert r.status_code == 422, (case, r.text)
        assert "line" in r.json()["detail"] or case == "no header", (case, r.text)
    assert (await client.get("/api/animas", headers=other_tenant.headers)).json()["items"] == before


async def test_cli_export_and_import(
    pg_url: str, data_dir: Path, tmp_path: Path, client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    source = await populated_anima(client, runtime, tenant)
    out = tmp_path / "anima.jsonl"
    done = run_cli(pg_url, data_dir, "animas", "export", source, "--output", str(out))
    assert done.returncode == 0, done.stderr
    assert out.read_text().splitlines(keepends=True) == await export(runtime, tenant.org_id, source)
    org = f"cli-import-{uuid.uuid4().hex[:8]}"
    assert run_cli(pg_url, data_dir, "keys", "create", "--org", org).returncode == 0  # only keys create makes orgs
    done = run_cli(pg_url, data_dir, "animas", "import", str(out), "--org", org)
    assert done.returncode == 0, done.stderr
    copy = done.stdout.strip().splitlines()[-1]
    assert (await rows_of(runtime, copy))["events"] == (await rows_of(runtime, source))["events"]
    missing = run_cli(pg_url, data_dir, "animas", "export", str(uuid.uuid4()))
    assert missing.returncode == 1 and "not found" in missing.stderr


async def test_export_of_an_anima_with_more_knowledge_than_a_statement_can_bind(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, other_tenant: Tenant
) -> None:
    """Postgres takes at most 32,767 bound parameters per statement: neither the export nor the
    import may send one per knowledge item."""
    r = await client.post("/api/animas", json={"name": "many-facts"}, headers=tenant.headers)
    assert r.status_code == 201, r.text
    anima_id = r.json()["id"]
    many = 33_000
    async with runtime.engine.begin() as conn:
        await conn.execute(
            text(
                "INSERT INTO knowledge (id, org_id, anima_id, type, content, content_hash, meta) "
                "SELECT gen_random_uuid(), :org, :anima, 'FACT', 'fact number ' || i, md5(i::text), '{}' "
                "FROM generate_series(1, :n) i"
            ),
            {"org": tenant.org_id, "anima": uuid.UUID(anima_id), "n": many},
        )
        await conn.execute(
            text("UPDATE knowledge SET deleted_at = now() WHERE anima_id = :anima AND content = 'fact number 7'"),
            {"anima": uuid.UUID(anima_id)},
        )
    lines = await export(runtime, tenant.org_id, anima_id)
    facts = [json.loads(line)["content"] for line in lines if json.loads(line)["kind"] == "knowledge"]
    assert len(facts) == many - 1 and "fact number 7" not in facts  # a forgotten item stays out
    copy = str(await import_anima(runtime, other_tenant.org_id, lines))
    assert (await rows_of(runtime, copy))["knowledge"] == many - 1


async def test_an_export_is_one_snapshot_while_the_dreamer_writes(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, other_tenant: Tenant
) -> None:
    """Events, memories and knowledge are read by several statements: a dream that commits while
    an export is under way must show in all of them or in none, or the export would name events it
    does not contain and could not be imported."""
    source = await populated_anima(client, runtime, tenant, name="busy")
    async with runtime.read_session() as session:
        stream = export_lines(session, tenant.org_id, uuid.UUID(source))
        lines = [await anext(stream), await anext(stream)]  # the anima, then the first event: its read is open
        assert json.loads(lines[-1])["kind"] == "event"
        more = turns(["By the way, I adopted a cat named Miso.", "Miso is a lovely name!"], session="s3")
        await add_events(runtime, tenant.org_id, uuid.UUID(source), more)
        assert (await run_dream(runtime.dreams, tenant.org_id, uuid.UUID(source), trigger="test")).status == "completed"
        lines += [line async for line in stream]
    records = [json.loads(line) for line in lines]
    assert not any("Miso" in json.dumps(r) for r in records)  # written after the export began
    events = {r["id"] for r in records if r["kind"] == "event"}
    assert all(set(r["event_ids"]) <= events for r in records if r["kind"] == "memory")
    await import_anima(runtime, other_tenant.org_id, lines)  # raises on a reference outside the export
