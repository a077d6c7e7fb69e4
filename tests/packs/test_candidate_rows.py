"""Candidate rows carry only what a compile reads, and build the same candidates as the full rows did.

The long-term and session statements send a memory's content only where the compile uses it (no
summary, or turn vectors in the query's embedding space) and its turn vectors only in that space
(``sql.memory_columns``). Each memory shape is read both ways here: through the pack statements,
and as the full row with the rule the compiler applied to it before.
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

from sqlalchemy import text

from elephantasm.db.vectors import vector_literal
from elephantasm.domain.presets import compile_weights
from elephantasm.runtime import Runtime
from elephantasm.services.packs import candidates as cands
from elephantasm.services.packs.reads import snapshot_transaction
from elephantasm.services.packs.service import build_request
from elephantasm.services.packs.session import SessionScope
from elephantasm.services.spaces import current_space
from tests.conftest import Tenant
from tests.packs.conftest import FROZEN_NOW
from tests.packs.helpers import add_memory

VECTORS = bytes(range(16))
# (summary, content, turn vectors, in the server's embedding space)
SHAPES = {
    "summary": ("the offsite is in Berlin", "User: where is the offsite? Assistant: Berlin.", None, True),
    "no summary": ("", "User: the budget was approved by Alice", None, True),
    "nothing": ("", None, None, True),
    "turns in space": ("Alice approved it", "User: Alice approved the budget", VECTORS, True),
    "turns elsewhere": ("Alice approved it", "User: Alice approved the budget", VECTORS, False),
    "empty turns": ("Alice approved it", "User: Alice approved the budget", b"", True),
}


async def _memories(runtime: Runtime, tenant: Tenant, anima: str) -> dict[uuid.UUID, str]:
    ids = {}
    for i, (name, (summary, content, turns, in_space)) in enumerate(SHAPES.items()):
        mid = await add_memory(
            runtime,
            tenant,
            anima,
            summary or "placeholder",
            session_id="s1",
            time_end=FROZEN_NOW - timedelta(hours=i + 1),
        )
        async with runtime.unit_of_work() as session:
            await session.execute(
                text(
                    "UPDATE memories SET summary = :s, content = :c, turn_vectors = :t, "
                    "embedding_space = CASE WHEN :in_space THEN embedding_space ELSE -1 END "
                    "WHERE id = :id"
                ),
                {"s": summary, "c": content, "t": turns, "in_space": in_space, "id": mid},
            )
        ids[mid] = name
    return ids


def _expected(row: Any, space: int | None) -> tuple[str, bytes | None, str | None]:
    """(text, turn_vectors, body) as the compiler built them from the full row."""
    turns = row.turn_vectors if space is not None and row.embedding_space == space else None
    return row.summary or row.content or "", turns, row.content if turns else None


async def test_memory_candidates_match_the_full_rows(pack_runtime: Runtime, tenant: Tenant, panima: dict) -> None:
    rt, anima = pack_runtime, panima["id"]
    ids = await _memories(rt, tenant, anima)
    async with rt.engine.connect() as conn:
        full = {
            r.id: r
            for r in (
                await conn.execute(
                    text(
                        "SELECT id, summary, content, turn_vectors, embedding_space FROM memories WHERE anima_id = :a"
                    ),
                    {"a": uuid.UUID(anima)},
                )
            ).all()
        }
    for query in ("who approved the budget", None):
        req = build_request(rt.packs, tenant.org_id, uuid.UUID(anima), query=query, as_of=FROZEN_NOW)
        vec = (await rt.embedder.embed([query]))[0] if query else None
        scope = cands.Scope(
            req.org_id,
            req.anima_id,
            req.as_of,
            req.query,
            vector_literal(vec) if vec else None,
            compile_weights(req.config, req.query),
            req.config,
            await current_space(rt),
            len(vec) if vec else None,
        )
        async with snapshot_transaction(rt.engine) as conn:
            long_term = await cands.long_term_memories(conn, scope, 50, [])
            session = await cands.session_memories(conn, scope, SessionScope("s1"), 50)
        space = await current_space(rt) if query else None
        for got in (long_term, session):
            assert {c.id for c in got} == set(ids)
            for c in got:
                assert (c.text, c.turn_vectors, c.body) == _expected(full[c.id], space), (ids[c.id], query)
                assert c.happened_at == c.time_end and c.session_id == "s1"
            by_name = {ids[c.id]: c for c in got}
            assert (by_name["turns in space"].body is not None) == (query is not None)  # the shapes differ
            assert by_name["turns elsewhere"].turn_vectors is None and by_name["no summary"].text.startswith("User:")
