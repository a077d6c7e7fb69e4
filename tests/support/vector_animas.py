"""Helpers of the exact-vs-HNSW tests (memories and knowledge): animas, random
vectors, the flip and the rows' ``vector_indexed`` flags (a runtime of their own: ``tests.support.databases``)."""

from __future__ import annotations

import uuid

import numpy as np
from sqlalchemy import text

from elephantasm.db import size_switches
from elephantasm.runtime import Runtime
from elephantasm.schemas.animas import AnimaCreate
from elephantasm.services.animas import create_anima
from tests.conftest import Tenant

DIM = 256
SPACE = 99  # an embedding space code no embedder of the tests registers


async def new_anima(rt: Runtime, tenant: Tenant) -> uuid.UUID:
    """A new anima of ``tenant``."""
    async with rt.unit_of_work() as session:
        return (await create_anima(session, tenant.org_id, AnimaCreate(name="vectors"))).id


def random_vectors(n: int, seed: int) -> list[list[float]]:
    """``n`` random ``DIM``-wide vectors."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, DIM)).tolist()  # type: ignore[no-any-return]


async def flags(rt: Runtime, table: str, anima: uuid.UUID) -> dict[bool, int]:
    """How many of the anima's rows of ``table`` are (True) and are not (False) in the HNSW index."""
    sql = text(f"SELECT vector_indexed, count(*) FROM {table} WHERE anima_id = :a GROUP BY 1")
    async with rt.engine.connect() as conn:
        return {flag: n for flag, n in await conn.execute(sql, {"a": anima})}


async def flip(rt: Runtime, tenant: Tenant, anima: uuid.UUID, threshold: int | None = None) -> bool:
    """``size_switches.index_vectors_if_large`` in a transaction of its own."""
    async with rt.engine.begin() as conn:
        return await size_switches.index_vectors_if_large(conn, tenant.org_id, anima, threshold)
