"""Lean packs through the API: small queried packs spend their budget on evidence, recall works by
meaning, and the relevance fusion can be chosen per compile."""

from __future__ import annotations

from datetime import timedelta

import httpx

from elephantasm.runtime import Runtime
from elephantasm.tokens import get_token_counter
from tests.conftest import Tenant
from tests.packs.conftest import FROZEN_NOW
from tests.packs.helpers import add_memory, extract, set_identity
from tests.packs.helpers import compile_json as _compile

FACT = (
    "User: I relocated to Lisbon last spring and rent a flat near the river. "
    "Assistant: That sounds great, thanks for telling me."
)
CHATTER = [
    "User: Can you give me a quick recipe for banana bread? Assistant: Sure. Keep it simple and taste as you go.",
    "User: I'm stuck on a flaky test in my Rust code. Assistant: Try the smallest input and add logging.",
    "User: Work has been hectic, 6 meetings back to back. Assistant: Can any of them become an email?",
    "User: I watched a detective series last night. Assistant: Nice! What did you like about it?",
]
QUESTION = "Where is the user living these days?"  # shares no content word with FACT


async def _seed(client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, anima: str) -> None:
    await set_identity(
        runtime,
        tenant,
        anima,
        personality_type="Inquisitive Helper",
        communication_style="balanced, neutral, asks questions often",
        self={"style_stats": {"casual": 105, "contractions": 227}, "traits": ["balanced"]},
        prose="I tend to write medium-length messages in a neutral tone.",
    )
    await add_memory(runtime, tenant, anima, FACT, time_end=FROZEN_NOW - timedelta(days=20), importance=0.6)
    for i in range(30):
        await add_memory(
            runtime,
            tenant,
            anima,
            CHATTER[i % len(CHATTER)].replace("quick", f"quick #{i}"),
            time_end=FROZEN_NOW - timedelta(days=1, hours=i),
            importance=0.5,
        )
    for i in range(6):  # the current session: recent chatter unrelated to the question
        await extract(client, tenant, anima, f"Another note on the banana bread, step {i}.", session_id="now")


async def test_a_500_token_queried_pack_is_mostly_evidence_and_finds_the_paraphrased_fact(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    await _seed(pclient, pack_runtime, tenant, panima["id"])
    pack = await _compile(pclient, tenant, {"anima_id": panima["id"], "query": QUESTION, "max_tokens": 500})
    text = pack["context"]
    assert pack["token_count"] == get_token_counter(pack["encoding"])(text) <= 500
    assert "Lisbon" in text.split("## Current session")[0]  # found by meaning, among long-term memories
    identity = text.split("\n\n")[0].splitlines()
    assert identity == ["## Identity", "- Name: pack-anima"]  # one short line; no stats, no JSON
    assert "{" not in text and "style_stats" not in text and "casual" not in text
    assert "That sounds great" not in text and "What did you like about it?" not in text  # filler dropped
    assert "## Temporal context" not in text
    evidence = sum(pack["layer_tokens"][k] for k in ("knowledge", "long_term", "session"))
    assert evidence >= 0.85 * pack["token_count"]


async def test_without_a_query_identity_keeps_three_natural_lines(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    await _seed(pclient, pack_runtime, tenant, panima["id"])
    text = (await _compile(pclient, tenant, {"anima_id": panima["id"], "max_tokens": 500}))["context"]
    identity = text.split("\n\n")[0].splitlines()
    assert identity == [
        "## Identity",
        "- Name: pack-anima",
        "- Personality: Inquisitive Helper",
        "- Style: balanced, neutral, asks questions often",
    ]


async def test_relevance_fusion_is_chosen_per_compile(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    await _seed(pclient, pack_runtime, tenant, panima["id"])
    body = {"anima_id": panima["id"], "query": QUESTION, "max_tokens": 1000}
    minmax = await _compile(pclient, tenant, body)
    rrf = await _compile(pclient, tenant, {**body, "relevance_fusion": "rrf"})
    assert minmax["fingerprint"] != rrf["fingerprint"]
    for pack in (minmax, rrf):
        rel = [m["breakdown"]["relevance"] for m in pack["content"]["long_term_memories"]]
        assert rel and all(0.0 <= r <= 1.0 for r in rel)
        assert "Lisbon" in pack["context"]
    r = await pclient.post("/api/packs/compile", json={**body, "relevance_fusion": "cosine"}, headers=tenant.headers)
    assert r.status_code == 422 and "relevance_fusion" in r.text
