"""The fast halfvec literal stores exactly what pgvector's full-precision text would."""

from __future__ import annotations

import random

from sqlalchemy import text

from elephantasm.db.vectors import vector_literal
from elephantasm.runtime import Runtime


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
        same = (
            (
                await session.execute(
                    stmt, {"a": [_full_text(v) for v in vectors], "b": [vector_literal(v) for v in vectors]}
                )
            )
            .scalars()
            .all()
        )
    assert len(same) == len(vectors) and all(same)
    assert vector_literal([0.5, -1.0, 0.0]) == "[0.5,-1.0,0.0]"
