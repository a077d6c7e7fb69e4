"""A memory whose knowledge was superseded is not served: the pack shows the current value only."""

from __future__ import annotations

import uuid
from datetime import timedelta

import httpx

from elephantasm.runtime import Runtime
from elephantasm.services.dreams import run_dream
from tests.conftest import Tenant
from tests.packs.conftest import FROZEN_NOW
from tests.packs.helpers import extract, latest


async def test_switched_favourite_supersedes_old_memory(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    anima = panima["id"]
    await extract(
        pclient,
        tenant,
        anima,
        "My favorite board game is Catan.",
        session_id="s1",
        occurred_at=(FROZEN_NOW - timedelta(days=3)).isoformat(),
    )
    await extract(
        pclient,
        tenant,
        anima,
        "I switched my go-to board game to Azul.",
        session_id="s2",
        occurred_at=(FROZEN_NOW - timedelta(days=1)).isoformat(),
    )
    run = await run_dream(pack_runtime.dreams, tenant.org_id, uuid.UUID(anima))
    assert run.status == "completed", run.error

    h = tenant.headers
    items = (await pclient.get("/api/knowledge", params={"anima_id": anima}, headers=h)).json()["items"]
    current = [k for k in items if "azul" in k["content"].lower()]
    assert len(current) == 1 and current[0]["valid_to"] is None
    history = (await pclient.get(f"/api/knowledge/{current[0]['id']}/history", headers=h)).json()
    assert any("catan" in k["content"].lower() and k["valid_to"] is not None for k in history), history

    for params in ({"query": "what board game do I like?"}, {}):
        pack = (await latest(pclient, tenant, anima, **params)).json()
        assert "Azul" in pack["context"], pack["context"]
        assert "Catan" not in pack["context"], pack["context"]


async def _tell_then_update(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, anima: str, first: str, update: str
) -> dict:
    """``first`` three days ago, ``update`` yesterday (two sessions), then one dream; returns the update event."""
    await extract(
        client, tenant, anima, first, session_id="s1", occurred_at=(FROZEN_NOW - timedelta(days=3)).isoformat()
    )
    later = await extract(
        client, tenant, anima, update, session_id="s2", occurred_at=(FROZEN_NOW - timedelta(days=1)).isoformat()
    )
    run = await run_dream(runtime.dreams, tenant.org_id, uuid.UUID(anima))
    assert run.status == "completed", run.error
    return later


async def test_an_exchange_with_one_superseded_value_is_dropped_and_its_other_fact_still_served(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    anima = panima["id"]
    await _tell_then_update(
        pclient,
        pack_runtime,
        tenant,
        anima,
        "My favorite board game is Catan. My favorite cuisine is Ethiopian.",
        "I switched my go-to board game to Azul.",
    )

    for query in ("what board game do I like?", "which cuisine do I like?"):
        pack = (await latest(pclient, tenant, anima, query=query, max_tokens=1000)).json()
        assert "Catan" not in pack["context"], pack["context"]
        assert "Azul" in pack["context"], pack["context"]
        # The cuisine is still served, by its own current knowledge item citing the same event.
        facts = [k["content"] for k in pack["content"]["knowledge"]]
        assert any("Ethiopian" in f for f in facts) or query.startswith("what board"), facts


async def test_the_update_itself_is_kept_when_it_also_names_the_old_value(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    anima = panima["id"]
    update = await _tell_then_update(
        pclient,
        pack_runtime,
        tenant,
        anima,
        "My favorite board game is Catan.",
        "My favorite board game is Azul now, Catan got old.",
    )
    pack = (await latest(pclient, tenant, anima, query="what board game do I like?", max_tokens=1000)).json()
    cited = {
        p for m in pack["content"]["long_term_memories"] + pack["content"]["session_memories"] for p in m["provenance"]
    }
    assert update["id"] in cited, pack["context"]
