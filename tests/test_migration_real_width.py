"""Migration 0010: padded vectors are cut to their space's own width (cosines unchanged), a label
that does not match its vector is dropped for re-embedding, and the downgrade pads them back."""

from __future__ import annotations

import asyncio
import math
import uuid
from collections.abc import Iterator

import pytest

from elephantasm.db.migrate import downgrade, upgrade
from tests.support.databases import connect, create_database, drop_database

WORDLLAMA = "wordllama:l2_supercat/256/0.4.0.post1"
HASH = "hash-v1/384/1"
SLASHED = "openai:BAAI/bge-small/256/1"  # a model name may contain '/': the width is read from the end


@pytest.fixture
def db(pg_url: str) -> Iterator[str]:
    url = create_database(pg_url, "mig10")
    yield url
    drop_database(url)


def _unit(dim: int, seed: int) -> list[float]:
    v = [math.sin(seed * 7.0 + i) for i in range(dim)]
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]


def _literal(v: list[float]) -> str:
    return "[" + ",".join(repr(x) for x in v) + "]"


async def _seed(url: str, rows: dict[str, tuple[list[float], str | None]]) -> dict[str, uuid.UUID]:
    """One anima; a memory per row (padded to 384 as before 0010) and a knowledge item for the first."""
    conn = await connect(url)
    org, anima, ids = uuid.uuid4(), uuid.uuid4(), {}
    try:
        await conn.execute("INSERT INTO orgs (id, name) VALUES ($1, 'o')", org)
        await conn.execute("INSERT INTO animas (id, org_id, name) VALUES ($1, $2, 'a')", anima, org)
        for name, (vec, space) in rows.items():
            ids[name] = uuid.uuid4()
            padded = vec + [0.0] * (384 - len(vec))
            await conn.execute(
                "INSERT INTO memories (id, org_id, anima_id, summary, content, embedding, embedding_space) "
                "VALUES ($1, $2, $3, $4, $4, $5::halfvec, $6)",
                ids[name],
                org,
                anima,
                name,
                _literal(padded),
                space,
            )
        vec, space = rows["wordllama"]
        await conn.execute(
            "INSERT INTO knowledge (id, org_id, anima_id, type, content, content_hash, embedding, embedding_space) "
            "VALUES ($1, $2, $3, 'FACT', 'k', 'h', $4::halfvec, $5)",
            uuid.uuid4(),
            org,
            anima,
            _literal(vec + [0.0] * 128),
            space,
        )
    finally:
        await conn.close()
    return ids


async def _state(url: str) -> dict[str, tuple[int, str | None, list[float]]]:
    conn = await connect(url)
    try:
        rows = await conn.fetch(
            "SELECT summary, vector_dims(embedding) AS d, embedding_space, embedding::real[] AS v FROM memories"
        )
        rows += await conn.fetch(
            "SELECT 'knowledge' AS summary, vector_dims(embedding) AS d, embedding_space, embedding::real[] AS v "
            "FROM knowledge"
        )
    finally:
        await conn.close()
    return {r["summary"]: (r["d"], r["embedding_space"], list(r["v"])) for r in rows}


def _close(a: list[float], b: list[float]) -> bool:
    return len(a) == len(b) and all(abs(x - y) < 1e-3 for x, y in zip(a, b, strict=True))


async def test_padded_vectors_are_cut_to_their_width_and_padded_back_on_downgrade(db: str) -> None:
    await asyncio.to_thread(upgrade, db, "0009")
    not_padding = _unit(384, 4)  # labelled 256-d, but its last 128 values are not zeros
    rows = {
        "wordllama": (_unit(256, 1), WORDLLAMA),
        "hash": (_unit(384, 2), HASH),
        "slashed": (_unit(256, 3), SLASHED),
        "unlabelled": (_unit(256, 5), None),
        "mislabelled": (not_padding, WORDLLAMA),
    }
    await _seed(db, rows)

    await asyncio.to_thread(upgrade, db, "0010")
    after = await _state(db)
    assert after["wordllama"][:2] == (256, WORDLLAMA) and _close(after["wordllama"][2], rows["wordllama"][0])
    assert after["knowledge"][:2] == (256, WORDLLAMA)
    assert after["slashed"][:2] == (256, SLASHED)
    assert after["hash"][:2] == (384, HASH) and _close(after["hash"][2], rows["hash"][0])
    # Unknown space: left at its stored width, stale as before (reembed rewrites it).
    assert after["unlabelled"][:2] == (384, None)
    # Not padding: nothing is cut, and the label goes so that reembed rewrites the vector.
    assert after["mislabelled"][:2] == (384, None) and _close(after["mislabelled"][2], not_padding)

    await asyncio.to_thread(downgrade, db, "0009")
    back = await _state(db)
    assert back["wordllama"][0] == 384 and _close(back["wordllama"][2], rows["wordllama"][0] + [0.0] * 128)
    assert back["knowledge"][0] == 384
    assert _close(back["hash"][2], rows["hash"][0])


async def test_downgrade_refuses_vectors_wider_than_384(db: str) -> None:
    await asyncio.to_thread(upgrade, db, "head")
    conn = await connect(db)
    try:
        org, anima = uuid.uuid4(), uuid.uuid4()
        await conn.execute("INSERT INTO orgs (id, name) VALUES ($1, 'o')", org)
        await conn.execute("INSERT INTO animas (id, org_id, name) VALUES ($1, $2, 'a')", anima, org)
        # At head a row stores its space's code (migration 0026); the downgrade turns it back into the label.
        space = await conn.fetchval("INSERT INTO embedding_spaces (label) VALUES ('openai:big/512/1') RETURNING id")
        await conn.execute(
            "INSERT INTO memories (id, org_id, anima_id, summary, content, embedding, embedding_space) "
            "VALUES ($1, $2, $3, 's', 's', $4::halfvec, $5)",
            uuid.uuid4(),
            org,
            anima,
            _literal(_unit(512, 9)),
            space,
        )
    finally:
        await conn.close()
    with pytest.raises(RuntimeError, match="wider than 384"):
        await asyncio.to_thread(downgrade, db, "0009")
    conn = await connect(db)
    try:  # nothing was lost
        assert await conn.fetchval("SELECT vector_dims(embedding) FROM memories") == 512
    finally:
        await conn.close()
