"""Migration 0016 adds ``ix_memories_pack_score`` on the models' score key and stores pack history as
text; the downgrade drops the index and parses the history back into jsonb."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator

import pytest

from elephantasm.db.migrate import downgrade, upgrade
from elephantasm.db.models import memory_score_key
from tests.support.databases import connect, database_before

ORG, ANIMA = uuid.uuid4(), uuid.uuid4()
# (importance, confidence) → the key as the score clamps them: importance + 0.4 × confidence
MEMORIES = {(0.5, 0.5): 0.7, (1.2, 0.25): 1.1, (-0.1, 1.5): 0.4}
PACK = {"context": "Alice: «budget» approved", "score": 0.123456789012345, "content": {"knowledge": []}}
PACK_ROW = (
    "INSERT INTO memory_packs (id, org_id, anima_id, preset_name, session_memory_count, knowledge_count, "
    "long_term_memory_count, has_identity, token_count, max_tokens, encoding, fingerprint, state_version, content) "
    "VALUES ($1, $2, $3, 'conversational', 0, 0, 0, false, 10, 500, 'cl100k_base', 'f', 1, CAST($4 AS text)::jsonb)"
)


@pytest.fixture
def old_db(pg_url: str) -> Iterator[tuple[str, str]]:
    """A database at the revision before 0016, and that revision."""
    with database_before(pg_url, "0016", "scorekey") as db:
        yield db


async def _query(url: str, sql: str, *args: object) -> list[tuple]:
    conn = await connect(url)
    try:
        return [tuple(r) for r in await conn.fetch(sql, *args)]
    finally:
        await conn.close()


async def test_upgrade_indexes_the_score_key_and_keeps_packs_as_text_and_back(old_db: tuple[str, str]) -> None:
    url, before = old_db
    conn = await connect(url)
    try:
        await conn.execute("INSERT INTO orgs (id, name) VALUES ($1, 'o')", ORG)
        await conn.execute("INSERT INTO animas (id, org_id, name) VALUES ($1, $2, 'a')", ANIMA, ORG)
        for importance, confidence in MEMORIES:
            await conn.execute(
                "INSERT INTO memories (id, org_id, anima_id, summary, importance, confidence) "
                "VALUES ($1, $2, $3, 's', $4, $5)",
                uuid.uuid4(),
                ORG,
                ANIMA,
                importance,
                confidence,
            )
        await conn.execute(PACK_ROW, uuid.uuid4(), ORG, ANIMA, json.dumps(PACK))
    finally:
        await conn.close()
    await asyncio.to_thread(upgrade, url, "0016")
    (definition,) = await _query(url, "SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_memories_pack_score'")
    assert "INCLUDE (importance, confidence, time_start, time_end, id)" in definition[0]
    assert "WHERE ((deleted_at IS NULL) AND (merged_into IS NULL)" in definition[0]
    # The key (the statements' text, the index's expression) is the clamped sum.
    keys = await _query(url, f"SELECT {memory_score_key('m')} FROM memories m WHERE m.anima_id = $1 ORDER BY 1", ANIMA)
    assert [round(k, 12) for (k,) in keys] == sorted(MEMORIES.values())
    (content,) = await _query(url, "SELECT content FROM memory_packs")
    assert isinstance(content[0], str) and json.loads(content[0]) == PACK

    await asyncio.to_thread(downgrade, url, before)
    assert await _query(url, "SELECT to_regclass('ix_memories_pack_score')") == [(None,)]
    assert len(await _query(url, "SELECT 1 FROM memories")) == len(MEMORIES)
    assert await _query(url, "SELECT content = CAST($1 AS text)::jsonb FROM memory_packs", json.dumps(PACK)) == [
        (True,)
    ]
