"""Embedding spaces: does inject's vector arm keep its HNSW index with the space filter, and how fast
does ``reembed`` move an anima's vectors into a new space?

A fresh embedded Postgres gets, for each HNSW-indexed width (256 and 384; vectors are stored at
their model's own width), two animas of N memories each (random unit vectors,
COPY-fast via ``INSERT … SELECT``), the HNSW indexes built afterwards. Then, for one anima per width:

- the vector arm of :mod:`elephantasm.services.packs.topk` (anima + liveness + ``embedding_space``
  and width filters, ``ORDER BY`` the width's distance ``LIMIT 60``, the compile's ``hnsw.ef_search``
  and iterative scan) under ``EXPLAIN ANALYZE``: which index the plan reads and its median time over
  20 queries, with all rows in the server's space, and with 90 % of them still in another space;
- ``reembed`` of all the 384-d anima's rows from another space into the configured embedder's (the
  default's are 256-d), end to end (read, embed, write in committed batches under the anima's lock),
  in rows per second.
"""

from __future__ import annotations

import asyncio
import statistics
import time
import uuid
from pathlib import Path
from typing import Any

from benchmarks.harness import migrated_database
from benchmarks.inject_data import bulk_indexes, create_sql
from benchmarks.results import Section
from elephantasm.db.size_switches import vector_rows_sql
from elephantasm.db.vectors import INDEXED_DIMS, hnsw_distance, width_is

TITLE = "embedding spaces: HNSW with the space filter, and reembed throughput"
ROWS = {"tiny": 1_000, "small": 10_000, "full": 100_000}
QUERIES = 20
# Rows store a space's code; these are codes no embedder registers here.
OLD_SPACE = 999  # another space (width irrelevant: never compared)

_LOAD = """INSERT INTO memories (id, org_id, anima_id, summary, embedding, embedding_space, time_end)
SELECT gen_random_uuid(), $1, $2, 'memory number ' || g || ' about the ' || (g % 97) || ' plan', r.v::vector::halfvec,
       $3, now() - make_interval(hours => g % 5000)
FROM generate_series(1, $4) g CROSS JOIN LATERAL
     (SELECT array_agg(random() - 0.5) AS v FROM generate_series(1, $5) x WHERE g > 0) r"""
_RANDOM_VECTOR = "SELECT (SELECT array_agg(random() - 0.5) FROM generate_series(1, $1))::vector::text"


def _arm_sql(dim: int) -> str:
    return f"""SELECT m.id FROM memories m WHERE m.org_id = $1 AND m.anima_id = $2 AND m.deleted_at IS NULL
AND m.merged_into IS NULL AND m.state <> 'archived' AND {width_is("m.embedding", dim)} AND m.embedding_space = $3
{vector_rows_sql("m", True)} ORDER BY {hnsw_distance("m.embedding", "$4", dim)} LIMIT 60"""


def _space(dim: int) -> int:
    return dim  # one space per width


async def _arm(conn: Any, org: uuid.UUID, anima: uuid.UUID, dim: int) -> tuple[str, float]:
    """(index the plan reads, median execution ms) of the vector arm over QUERIES random queries."""
    times, used = [], ""
    for _ in range(QUERIES):
        qv = await conn.fetchval(_RANDOM_VECTOR, dim)
        async with conn.transaction():
            await conn.execute(
                "SET LOCAL hnsw.ef_search = 150; SET LOCAL hnsw.iterative_scan = relaxed_order; "
                "SET LOCAL max_parallel_workers_per_gather = 0"
            )
            plan = [
                r[0]
                for r in await conn.fetch("EXPLAIN (ANALYZE, COSTS OFF) " + _arm_sql(dim), org, anima, _space(dim), qv)
            ]
        # The first scan node names what the plan reads (HNSW, or another index/heap plus a sort).
        scan = next((line.strip().removeprefix("->").strip() for line in plan if " Scan" in line), "?")
        used = scan.split(" on memories")[0] + (" + sort" if any("Sort" in line for line in plan) else "")
        times.append(float(plan[-1].split(":")[1].split()[0]))
    return used, statistics.median(times)


async def _measure(url: str, work: Path, n: int) -> tuple[list[list[str]], float, int]:
    import asyncpg
    from sqlalchemy.engine import make_url

    from elephantasm.runtime import build_runtime
    from elephantasm.services.reembed import reembed
    from elephantasm.settings import Settings

    u = make_url(url)
    conn = await asyncpg.connect(user=u.username, database=u.database, host=u.query["host"])
    rt = build_runtime(Settings(database_url=url, data_dir=work, secret_key="bench", dreamer_enabled=False), url)
    org = uuid.uuid4()
    animas = {dim: (uuid.uuid4(), uuid.uuid4()) for dim in INDEXED_DIMS}
    rows: list[list[Any]] = []
    try:
        await conn.execute("INSERT INTO orgs (id, name) VALUES ($1, 'bench')", org)
        for pair in animas.values():
            for a in pair:
                # On the HNSW path at every size: this measures the index.
                await conn.execute(
                    "INSERT INTO animas (id, org_id, name, vectors_indexed) VALUES ($1, $2, 'bench', true)", a, org
                )
        hnsw = [ix for ix in bulk_indexes() if ix.name.startswith("ix_memories_embedding_hnsw")]
        for ix in hnsw:
            await conn.execute(f"DROP INDEX {ix.name}")
        for dim, pair in animas.items():
            for a in pair:
                await conn.execute(_LOAD, org, a, _space(dim), n, dim)
        for ix in hnsw:
            await conn.execute(create_sql(ix))
        await conn.execute("ANALYZE memories")
        for dim, (anima, _) in animas.items():
            rows.append([f"{n:,}", dim, "all in the server's space", *await _arm(conn, org, anima, dim)])
        for anima, _ in animas.values():
            await conn.execute(
                "UPDATE memories SET embedding_space = $1 WHERE anima_id = $2 AND random() < 0.9", OLD_SPACE, anima
            )
        await conn.execute("ANALYZE memories")
        for dim, (anima, _) in animas.items():
            rows.append([f"{n:,}", dim, "90 % still in another space", *await _arm(conn, org, anima, dim)])
        moved = animas[384][0]
        await conn.execute("UPDATE memories SET embedding_space = $1 WHERE anima_id = $2", OLD_SPACE, moved)
        started = time.perf_counter()
        result = await reembed(rt, moved)
        seconds = time.perf_counter() - started
    finally:
        await conn.close()
        await rt.close()
    return [[r[0], str(r[1]), r[2], r[3], f"{r[4]:.2f}"] for r in rows], seconds, result.done


def run(size: str) -> Section:
    """Measure on a fresh embedded Postgres; returns the ``spaces`` section."""
    n = ROWS[size]
    with migrated_database("elephantasm-bench-spaces-") as (url, work):
        rows, seconds, done = asyncio.run(_measure(url, work, n))
    rate = done / seconds if seconds else 0.0
    notes = [
        f"Per width, two animas of {n:,} memories each (random unit vectors, 4 × {n:,} rows in the table); the "
        f"vector arm of a compile for one of them, median of {QUERIES} random queries under EXPLAIN ANALYZE "
        "(ef_search 150, iterative scan).",
        f"reembed of that anima's {done:,} memories from another space: {seconds:.1f} s, {rate:,.0f} rows/s end to "
        "end (read, embed with the configured embedder, write in committed batches of 256 under the anima's lock).",
    ]
    return Section(
        name="spaces",
        title=TITLE,
        headers=["memories / anima", "width", "state", "index read", "p50 ms"],
        rows=rows,
        notes=notes,
    )
