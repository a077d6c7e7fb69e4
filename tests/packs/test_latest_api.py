"""``GET /api/animas/{id}/memory-packs/latest`` through the API on real Postgres."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest

from elephantasm.runtime import Runtime
from elephantasm.schemas.packs import MemoryPackRead
from elephantasm.services.keys import create_key
from elephantasm.tokens import get_token_counter
from tests.conftest import Tenant
from tests.packs.conftest import FROZEN_NOW
from tests.packs.helpers import add_knowledge, add_memory, extract, latest, latest_url, set_identity


async def test_new_anima_gets_null(pclient: httpx.AsyncClient, tenant: Tenant, panima: dict) -> None:
    r = await latest(pclient, tenant, panima["id"])
    assert r.content == b"null" and r.json() is None
    assert "etag" not in r.headers


async def test_raw_events_appear_before_any_dream(pclient: httpx.AsyncClient, tenant: Tenant, panima: dict) -> None:
    """Nothing distilled yet: the current session's turns are in the pack, each tracing to itself."""
    first = await extract(
        pclient,
        tenant,
        panima["id"],
        "My favourite drink is green tea.",
        session_id="s1",
        occurred_at=(FROZEN_NOW - timedelta(minutes=2)).isoformat(),
    )
    second = await extract(
        pclient,
        tenant,
        panima["id"],
        "Noted: green tea.",
        session_id="s1",
        event_type="message.out",
        role="assistant",
        occurred_at=(FROZEN_NOW - timedelta(minutes=1)).isoformat(),
    )
    pack = (await latest(pclient, tenant, panima["id"])).json()
    MemoryPackRead.model_validate(pack)
    assert pack["context"] == pack["content"]["context"]
    assert "user: My favourite drink is green tea." in pack["context"]
    assert "assistant: Noted: green tea." in pack["context"]
    session = pack["content"]["session_memories"]
    assert [(m["id"], m["kind"], m["provenance"]) for m in session] == [
        (first["id"], "event", [first["id"]]),
        (second["id"], "event", [second["id"]]),
    ]
    assert pack["session_id"] == "s1" and pack["session_memory_count"] == 2
    assert all(m["breakdown"]["relevance"] == 0.0 for m in session)  # a number even without a query


async def test_earlier_sessions_pending_events_are_long_term_candidates(
    pclient: httpx.AsyncClient, tenant: Tenant, panima: dict
) -> None:
    old = await extract(
        pclient,
        tenant,
        panima["id"],
        "We planned a hiking trip to the Alps.",
        session_id="old",
        occurred_at=(FROZEN_NOW - timedelta(days=3)).isoformat(),
    )
    await extract(pclient, tenant, panima["id"], "What's the weather like?", session_id="new")
    pack = (await latest(pclient, tenant, panima["id"], query="hiking trip")).json()
    long_term = pack["content"]["long_term_memories"]
    assert [(m["id"], m["kind"], m["provenance"]) for m in long_term] == [(old["id"], "event", [old["id"]])]
    assert "We planned a hiking trip to the Alps." in pack["context"].split("## Current session")[0]
    assert long_term[0]["similarity"] is not None and long_term[0]["breakdown"]["relevance"] > 0


async def test_explicit_and_gap_sessions(pclient: httpx.AsyncClient, tenant: Tenant, panima: dict) -> None:
    """``session_id`` picks the current session; without session ids a silence ends one."""
    a = await extract(pclient, tenant, panima["id"], "turn in session A", session_id="A")
    await extract(pclient, tenant, panima["id"], "turn in session B", session_id="B")
    pack = (await latest(pclient, tenant, panima["id"], session_id="A")).json()
    assert [m["id"] for m in pack["content"]["session_memories"]] == [a["id"]] and pack["session_id"] == "A"

    gap = await pclient.post("/api/animas", json={"name": "gap"}, headers=tenant.headers)
    anima = gap.json()["id"]
    early = await extract(
        pclient, tenant, anima, "yesterday's chat", occurred_at=(FROZEN_NOW - timedelta(hours=5)).isoformat()
    )
    recent = [
        await extract(
            pclient, tenant, anima, f"now {i}", occurred_at=(FROZEN_NOW - timedelta(minutes=10 - i)).isoformat()
        )
        for i in range(3)
    ]
    pack = (await latest(pclient, tenant, anima)).json()
    assert [m["id"] for m in pack["content"]["session_memories"]] == [e["id"] for e in recent]
    assert [m["id"] for m in pack["content"]["long_term_memories"]] == [early["id"]]


async def test_every_layer_and_the_wire_shape(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    event = await extract(pclient, tenant, panima["id"], "I am allergic to peanuts.", session_id="s")
    memory = await add_memory(
        pack_runtime,
        tenant,
        panima["id"],
        # Not "The user is allergic to peanuts.": the session's line says that, and would stand for it.
        "The user carries an EpiPen for the peanut allergy.",
        time_end=FROZEN_NOW - timedelta(days=2),
        importance=0.9,
        event_ids=[event["id"]],
    )
    await add_knowledge(pack_runtime, tenant, panima["id"], "User is allergic to peanuts.", memory_ids=[memory])
    await add_knowledge(pack_runtime, tenant, panima["id"], "User likes peanuts.", superseded=True)
    await set_identity(
        pack_runtime,
        tenant,
        panima["id"],
        personality_type="INTJ",
        communication_style="concise",
        self={"values": ["care"]},
        prose="A careful assistant.",
    )
    r = await latest(pclient, tenant, panima["id"], query="peanuts", max_tokens=500)
    pack = r.json()
    MemoryPackRead.model_validate(pack)
    content = pack["content"]
    assert content["identity"] == {
        "name": "pack-anima",
        "personality_type": "INTJ",
        "communication_style": "concise",
        "self_reflection": {"values": ["care"]},
        "prose": "A careful assistant.",
    }
    assert [k["content"] for k in content["knowledge"]] == ["User is allergic to peanuts."]  # superseded one left out
    assert content["knowledge"][0]["provenance"] == [event["id"]] and content["knowledge"][0]["type"] == "FACT"
    assert [m["id"] for m in content["long_term_memories"]] == [str(memory)]
    assert content["long_term_memories"][0]["provenance"] == [event["id"]]
    assert content["temporal_context"] is None  # not about time: no temporal line, so no temporal data either
    assert pack["has_identity"] and pack["knowledge_count"] == 1 and pack["long_term_memory_count"] == 1
    text = pack["context"]
    # Lean with a query: the identity is its name line (a small pack), no stored internals, and the
    # temporal line only when the question is about time.
    assert "- Name: pack-anima\n" in text and "INTJ" not in text and "values" not in text and "{" not in text
    assert "## Temporal context" not in text
    assert r.headers["etag"] == f'"{pack["fingerprint"]}"'
    timed_pack = (await latest(pclient, tenant, panima["id"], query="when did I mention peanuts?")).json()
    temporal = timed_pack["content"]["temporal_context"]
    assert temporal["last_event_at"] and temporal["hours_ago"] == 0.0
    timed = timed_pack["context"]
    order = [
        timed.index(h)
        for h in ("## Identity", "## Knowledge", "## Long-term memories", "## Current session", "## Temporal context")
    ]
    assert order == sorted(order)  # stable layers first, volatile last
    full = (await latest(pclient, tenant, panima["id"])).json()["context"]  # no query: the whole identity
    assert "- Personality: INTJ\n- Style: concise\n" in full and "## Temporal context" in full


@pytest.mark.parametrize("max_tokens", [200, 333, 4000])
async def test_token_count_is_exact_and_within_budget(
    pclient: httpx.AsyncClient, tenant: Tenant, panima: dict, max_tokens: int
) -> None:
    for i in range(40):
        await extract(
            pclient,
            tenant,
            panima["id"],
            f"Turn {i}: a fairly long message about the roadmap, the budget "
            f"and the Berlin offsite, with enough words to fill the budget quickly.",
            session_id=f"s{i % 3}",
        )
    for encoding in ("o200k_base", "cl100k_base"):
        pack = (await latest(pclient, tenant, panima["id"], max_tokens=max_tokens, encoding=encoding)).json()
        count = get_token_counter(encoding)(pack["context"])
        assert pack["token_count"] == count <= max_tokens and pack["encoding"] == encoding
        assert pack["context"]
    assert pack["max_tokens"] == max_tokens


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({"max_tokens": 199}, "max_tokens"),
        ({"max_tokens": 128_001}, "max_tokens"),
        ({"max_tokens": "lots"}, "max_tokens"),
        ({"preset": "nope"}, "preset"),
        ({"encoding": "gpt2"}, "encoding"),
    ],
)
async def test_bad_parameters_are_422_naming_them(
    pclient: httpx.AsyncClient, tenant: Tenant, panima: dict, params: dict, name: str
) -> None:
    r = await pclient.get(latest_url(panima["id"]), params=params, headers=tenant.headers)
    assert r.status_code == 422 and name in r.text, r.text
    body = {"anima_id": panima["id"], **params}
    r = await pclient.post("/api/packs/compile", json=body, headers=tenant.headers)
    assert r.status_code == 422 and name in r.text, r.text


async def test_unknown_preset_lists_the_valid_ones(pclient: httpx.AsyncClient, tenant: Tenant, panima: dict) -> None:
    r = await pclient.get(latest_url(panima["id"]), params={"preset": "nope"}, headers=tenant.headers)
    for valid in ("conversational", "self_determined", "recent", "important"):
        assert valid in r.json()["detail"]


async def test_etag_and_304(pclient: httpx.AsyncClient, tenant: Tenant, panima: dict) -> None:
    await extract(pclient, tenant, panima["id"], "remember me")
    first = await latest(pclient, tenant, panima["id"])
    etag = first.headers["etag"]
    for header in (etag, etag.strip('"'), f"W/{etag}", f'"other", {etag}'):
        r = await pclient.get(latest_url(panima["id"]), headers={**tenant.headers, "If-None-Match": header})
        assert r.status_code == 304 and r.content == b"" and r.headers["etag"] == etag
    r = await pclient.get(latest_url(panima["id"]), headers={**tenant.headers, "If-None-Match": '"stale"'})
    assert r.status_code == 200 and r.content == first.content
    await extract(pclient, tenant, panima["id"], "a change")
    r = await pclient.get(latest_url(panima["id"]), headers={**tenant.headers, "If-None-Match": etag})
    assert r.status_code == 200 and r.headers["etag"] != etag


async def test_health_reports_pack_cache_counters(
    pclient: httpx.AsyncClient, runtime, tenant: Tenant, panima: dict
) -> None:  # type: ignore[no-untyped-def]
    await extract(pclient, tenant, panima["id"], "hello")
    await latest(pclient, tenant, panima["id"])
    await latest(pclient, tenant, panima["id"])
    assert "pack_cache" not in (await pclient.get("/api/health")).json()  # counters are for admins only
    async with runtime.unit_of_work() as session:  # an admin key: the bootstrap org's (see api/routes/health.py)
        admin = await create_key(session, runtime.secret, "local", name="health-admin")
    stats = (await pclient.get("/api/health", headers={"Authorization": f"Bearer {admin.key}"})).json()["pack_cache"]
    assert (stats["misses"], stats["memory_hits"], stats["compiles"]) == (1, 1, 1)
    assert stats["compile_ms_p50"] > 0 and stats["entries"] == 1 and 0 < stats["bytes"] <= stats["max_bytes"]
