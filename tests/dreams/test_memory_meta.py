"""The offline engine's memory meta, ``{"engine": "offline"}``, is stored in the row as it is: the
API, export, an edit and curation's state transitions all see and keep it."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta

import httpx
from sqlalchemy import text

from elephantasm.domain.dreaming.offline import OFFLINE_META
from elephantasm.runtime import Runtime
from elephantasm.services.anima_export import export_lines
from elephantasm.services.dreams import run_dream
from elephantasm.services.dreams.curation import _TRANSITION_SQL
from tests.conftest import Tenant
from tests.dreams.helpers import T0, add_events, new_anima, turns


async def _stored_meta(runtime: Runtime, anima: uuid.UUID) -> dict[uuid.UUID, str | None]:
    sql = text("SELECT id, meta::text FROM memories WHERE anima_id = :a")
    async with runtime.engine.connect() as conn:
        return {r[0]: r[1] for r in (await conn.execute(sql, {"a": anima})).all()}


async def test_offline_meta_is_stored_as_written(client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant) -> None:
    anima = await new_anima(runtime, tenant.org_id, "meta")
    sessions = [["I live in Quito and grow orchids.", "Lovely!"], ["My brother Tomas plays cello.", "Nice."],
                ["I bought a red bicycle for the hills.", "Enjoy."]]  # fmt: skip
    specs = [t for n, said in enumerate(sessions) for t in turns(said, f"s{n}", T0 + timedelta(days=n))]
    await add_events(runtime, tenant.org_id, anima, specs)
    run = await run_dream(runtime.dreams, tenant.org_id, anima)
    assert run.status == "completed", run.error
    stored = await _stored_meta(runtime, anima)
    assert len(stored) >= 2 and all(v is not None and json.loads(v) == OFFLINE_META for v in stored.values())
    ids = sorted(stored)
    h = tenant.headers

    listed = (await client.get("/api/memories", params={"anima_id": str(anima)}, headers=h)).json()
    items = listed["items"] if isinstance(listed, dict) else listed
    assert {m["id"]: m["meta"] for m in items} == {str(i): OFFLINE_META for i in ids}
    async with runtime.read_session() as session:
        lines = [json.loads(x) async for x in export_lines(session, tenant.org_id, anima)]
    assert [r["meta"] for r in lines if r["kind"] == "memory"] == [OFFLINE_META] * len(ids)

    # An edit (ORM) and a curation transition (raw SQL) add state_since to the engine's meta.
    edited = await client.patch(f"/api/memories/{ids[0]}", json={"state": "decaying"}, headers=h)
    assert edited.status_code == 200, edited.text
    assert set(edited.json()["meta"]) == {"engine", "state_since"} and edited.json()["meta"]["engine"] == "offline"
    async with runtime.engine.begin() as conn:
        await conn.execute(_TRANSITION_SQL, {"to": "decaying", "now": run.started_at, "since": "t", "ids": [ids[1]]})
    got = (await client.get(f"/api/memories/{ids[1]}", headers=h)).json()
    assert got["meta"] == {**OFFLINE_META, "state_since": "t"}
    # An explicit empty meta stays empty (it is not the engine's).
    cleared = await client.patch(f"/api/memories/{ids[0]}", json={"meta": {}}, headers=h)
    assert cleared.json()["meta"] == {}
    after = await _stored_meta(runtime, anima)
    assert after[ids[0]] == "{}" and json.loads(after[ids[1]]) == {**OFFLINE_META, "state_since": "t"}
    assert all(json.loads(after[i]) == OFFLINE_META for i in ids[2:])
