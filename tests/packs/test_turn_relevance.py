"""Multi-vector relevance: a fact said in passing inside a long noisy exchange still finds its memory.

The exchange's extractive summary keeps its signal-rich sentences (dates, names, numbers), not the
short line that answers the question, so the summary's vector alone ranks it below an unrelated
memory. The dreamer also stores the user's turns' vectors (``memories.turn_vectors``); the pack
blends in the best turn's cosine and ranks the exchange first.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

import httpx
from sqlalchemy import text

from elephantasm.domain.lean import lean_text
from elephantasm.runtime import Runtime
from elephantasm.services.dreams import run_dream
from tests.conftest import Tenant
from tests.packs.conftest import FROZEN_NOW
from tests.packs.helpers import extract, latest

# A burst of user messages on several threads (real-chat style), then one reply: one exchange.
NOISY_EXCHANGE = [
    ("user", "ugh, the printer jammed again at work on Monday, 3 times in one morning"),
    ("user", "my sister Jana's birthday is on May 3rd and I need a gift idea under 40 dollars"),
    ("user", "we adopted a puppy"),
    ("user", "what should I cook tonight? I have 2 eggs, 1 onion and some rice from Tuesday"),
    ("assistant", "Fried rice! It takes about 15 minutes."),
]
QUESTION = "Does the user have a dog?"


async def _record_and_dream(client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, anima: str) -> None:
    """The noisy exchange and one unrelated turn, distilled by one completed dream run."""
    start = FROZEN_NOW - timedelta(days=3)
    for i, (role, content) in enumerate(NOISY_EXCHANGE):
        await extract(
            client,
            tenant,
            anima,
            content,
            role=role,
            session_id="s1",
            event_type="message.in" if role == "user" else "message.out",
            occurred_at=(start + timedelta(minutes=i)).isoformat(),
        )
    await extract(
        client,
        tenant,
        anima,
        "My neighbour plays loud music every evening, I can't sleep.",
        session_id="s2",
        occurred_at=(FROZEN_NOW - timedelta(days=1)).isoformat(),
    )
    run = await run_dream(runtime.dreams, tenant.org_id, uuid.UUID(anima))
    assert run.status == "completed", run.error


async def test_a_fact_inside_a_long_noisy_exchange_outranks_an_unrelated_memory(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    anima = panima["id"]
    await _record_and_dream(pclient, pack_runtime, tenant, anima)

    async with pack_runtime.engine.connect() as conn:
        rows = (
            await conn.execute(
                text(
                    "SELECT summary, octet_length(turn_vectors) AS n FROM memories WHERE anima_id = :a ORDER BY time_end"
                ),
                {"a": uuid.UUID(anima)},
            )
        ).all()
    exchange, unrelated = rows
    assert "puppy" not in exchange.summary  # the answering line is not in the summary
    dim = pack_runtime.embedder.space.dim
    # Per user turn: its line (a 2-byte length, then the UTF-8 "User: ..." line) and an int8 row;
    # a 4-byte header (format 2: the lines travel in the blob, not as spans of the content).
    lines = [len(f"User: {c}".encode()) for role, c in NOISY_EXCHANGE if role == "user"]
    assert exchange.n == 4 + sum(2 + n + dim for n in lines)
    assert unrelated.n == 4 + 2 + len(b"User: My neighbour plays loud music every evening, I can't sleep.") + dim

    q, summary_vec, unrelated_vec = await pack_runtime.embedder.embed(
        [QUESTION, lean_text(exchange.summary), lean_text(unrelated.summary)]
    )

    def cos(a: list[float], b: list[float]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True))

    # By its summary alone the exchange would lose to the unrelated memory.
    assert cos(q, summary_vec) < cos(q, unrelated_vec)

    pack = (await latest(pclient, tenant, anima, query=QUESTION, max_tokens=2000)).json()
    memories = sorted(
        pack["content"]["long_term_memories"] + pack["content"]["session_memories"], key=lambda m: -m["score"]
    )
    assert memories[0]["summary"] == exchange.summary, [m["summary"] for m in memories]
    assert memories[0]["similarity"] > cos(q, summary_vec) + 0.05
    # The prompt shows the turn that matched; the wire keeps the stored summary.
    assert "User: we adopted a puppy" in pack["context"]
    assert "printer" not in pack["context"]


async def test_editing_a_memorys_content_drops_its_turn_vectors(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    anima = panima["id"]
    await _record_and_dream(pclient, pack_runtime, tenant, anima)
    sql = text("SELECT id, turn_vectors IS NOT NULL AS has FROM memories WHERE anima_id = :a ORDER BY time_end")
    async with pack_runtime.engine.connect() as conn:
        first = (await conn.execute(sql, {"a": uuid.UUID(anima)})).first()
    assert first is not None and first.has
    r = await pclient.patch(f"/api/memories/{first.id}", headers=tenant.headers, json={"content": "User: rewritten"})
    assert r.status_code == 200, r.text
    async with pack_runtime.engine.connect() as conn:
        edited = (await conn.execute(sql, {"a": uuid.UUID(anima)})).first()
    assert edited is not None and not edited.has  # its spans indexed the old content
    pack = (await latest(pclient, tenant, anima, query=QUESTION, max_tokens=2000)).json()
    assert "we adopted a puppy" not in pack["context"]  # no line is cut out of the new content
