"""The fast halfvec literal stores exactly what pgvector's full-precision text would."""

from __future__ import annotations

import random
import uuid

from sqlalchemy import text

from elephantasm.db.vectors import nearest_ids, vector_literal, width_is
from elephantasm.schemas.animas import AnimaCreate
from elephantasm.runtime import Runtime
from elephantasm.services.animas import create_anima
from tests.conftest import make_tenant


def _full_text(vector: list[float]) -> str:
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


async def test_vector_literal_gives_the_same_halfvec_as_full_precision_text(runtime: Runtime) -> None:
    rng = random.Random(7)
    vectors = [
        [rng.gauss(0.0, scale) for _ in range(48)] + [0.0, -0.0, 6.1e-5, 5.96e-8, 2.9e-8, 65504.0, 65519.9]
        for scale in (1e-6, 1e-3, 0.05, 1.0, 300.0) * 40
    ]
    stmt = text(
        "SELECT CAST(a AS halfvec) = CAST(b AS halfvec) FROM unnest(CAST(:a AS text[]), CAST(:b AS text[])) AS u(a, b)"
    )
    async with runtime.read_session() as session:
        same = (await session.execute(
            stmt, {"a": [_full_text(v) for v in vectors], "b": [vector_literal(v) for v in vectors]}
        )).scalars().all()
    assert len(same) == len(vectors) and all(same)
    assert vector_literal([0.5, -1.0, 0.0]) == "[0.5,-1.0,0.0]"


async def test_nearest_ids_reranks_hamming_candidates_by_exact_cosine(runtime: Runtime) -> None:
    """The HNSW index orders by the Hamming distance of the vectors' signs (migration 0017); the
    rows returned are ordered by the exact cosine of the stored halfvec, through that index."""
    tenant = await make_tenant(runtime, "bq")
    async with runtime.unit_of_work() as session:
        anima = (await create_anima(session, tenant.org_id, AnimaCreate(name="bq"))).id
    query = [1.0] * 8 + [0.01] * 248
    # Near by cosine (≈0.94) but its signs differ from the query's in 248 places.
    near = [1.0] * 8 + [-0.01] * 248
    # Signs as the query's but 8, cosine ≈0.02: the Hamming order alone would put it first.
    far = [-0.1] * 8 + [0.5] * 248
    ids = {"near": uuid.uuid4(), "far": uuid.uuid4()}
    where = "m.org_id = :org AND m.anima_id = :anima AND " + width_is("m.embedding", 256)
    async with runtime.unit_of_work() as session:
        for name, vec in (("near", near), ("far", far)):
            await session.execute(text(
                "INSERT INTO memories (id, org_id, anima_id, summary, state, embedding, created_at, updated_at) "
                "VALUES (:id, :org, :anima, :s, 'active', CAST(:v AS halfvec), now(), now())"
            ), {"id": ids[name], "org": tenant.org_id, "anima": anima, "s": name, "v": vector_literal(vec)})
    params = {"org": tenant.org_id, "anima": anima, "q": vector_literal(query)}
    async with runtime.engine.connect() as conn:
        await conn.execute(text("SET enable_seqscan = off"))
        rows = (await conn.execute(text(nearest_ids("memories", "m", where, ":q", 256, "2")), params)).all()
        plan = "\n".join((await conn.execute(text("EXPLAIN " + nearest_ids(
            "memories", "m", where, ":q", 256, "2")), params)).scalars())
    assert [r.id for r in rows] == [ids["near"], ids["far"]]
    assert rows[0].distance < 0.1 < 0.9 < rows[1].distance
    assert "ix_memories_embedding_hnsw256" in plan, plan
