"""Vector index variants at scale: how much of the exact cosine top-k does each return, how fast?

The quality benchmark cannot see an approximate index's losses: its animas hold ~100 memories, and
a pack's cosine arm asks for 30–156 of them, so any re-ranked candidate set covers them all. This
one loads N memory-like texts (``inject_data.memory_text``), then up to 10,000 distinct chat turns of
the quality generator, embedded with the configured embedder (WordLlama 256-d by default), into a
scratch table of a fresh Postgres (``enable_seqscan`` off: the index is measured), builds each variant,
and runs the compile's vector arm shape for 21 queries (inject's and the quality dataset's
questions) at the compile's settings (``hnsw.ef_search`` = 2k clamped to 64–1,000, iterative scan
``relaxed_order``, no parallel workers), k = 30 (a 250-token pack) and 156 (2,000 tokens and up).

Per variant and k: recall@k against the exact cosine top-k of the stored (half-precision) vectors
(a returned row counts when it is as near as the exact k-th: equal vectors are interchangeable),
its worst query, the same for the exact top 10, the median wall time of the statement
(client side, after a warm-up pass), and the index's bytes per row.
"""

from __future__ import annotations

import asyncio
import io
import random
import statistics
import time
from typing import Any

import numpy as np

from benchmarks.harness import migrated_database
from benchmarks.inject_data import QUERIES, memory_text
from benchmarks.results import Section

TITLE = "vector index variants: recall of the exact cosine top-k and time, at scale"
ROWS = {"tiny": 2_000, "small": 10_000, "full": 100_000}
KS = (30, 156)
TIE = 1e-4
CHAT_CONVERSATIONS = 130  # ~10k distinct turns
CHAT_TURNS = 10_000
PAD = "x" * 1500  # a memory row's other columns (its heap row is ~2.4 kB as left after dreaming)


def _variants(dim: int) -> list[tuple[str, str, Any]]:
    """(label, index key and opclass, SQL for k) — the half-float cosine index the schema uses and
    the binary quantisation with an exact re-rank of f × k Hamming candidates."""
    exact = f"embedding <=> CAST($1 AS halfvec({dim}))"
    bits = f"binary_quantize(embedding)::bit({dim})"

    def cosine(k: int) -> str:
        return f"SELECT id FROM ann WHERE anima = 1 ORDER BY (embedding::halfvec({dim})) <=> CAST($1 AS halfvec({dim})) LIMIT {k}"

    def rerank(f: int) -> Any:
        return lambda k: (
            f"SELECT id FROM (SELECT id, {exact} AS d FROM ann WHERE anima = 1 ORDER BY {bits} <~> "
            f"binary_quantize(CAST($1 AS halfvec({dim})))::bit({dim}) LIMIT {f * k}) c ORDER BY d, id LIMIT {k}"
        )

    return [
        ("halfvec cosine HNSW", f"((embedding::halfvec({dim})) halfvec_cosine_ops)", cosine),
        *[(f"bit Hamming HNSW, re-rank {f} x k", f"(({bits}) bit_hamming_ops)", rerank(f)) for f in (2, 4, 8)],
    ]


def _queries() -> list[str]:
    from benchmarks.quality.generator import GeneratorConfig, generate

    return list(QUERIES) + [q.question for q in generate(GeneratorConfig(conversations=2)).questions][::2]


def corpora(n: int) -> dict[str, list[str]]:
    """Texts to index: inject's memory summaries (``n``), and the quality generator's distinct chat
    turns (up to ``CHAT_TURNS``: its templates repeat, so more conversations add few new ones)."""
    from benchmarks.quality.generator import GeneratorConfig, generate

    rng = random.Random(5)
    ds = generate(GeneratorConfig(seed=3, conversations=CHAT_CONVERSATIONS))
    turns = sorted({t.content for c in ds.conversations for t in c.turns()})
    random.Random(5).shuffle(turns)
    return {"memory summaries": [memory_text(rng) for _ in range(n)], "chat turns": turns[: min(n, CHAT_TURNS)]}


async def _measure(url: str, n: int) -> list[list[str]]:
    from benchmarks.inject_data import _server_embedder

    embedder = _server_embedder()
    queries = np.asarray(await embedder.embed(_queries()), dtype=np.float32)
    rows: list[list[str]] = []
    for name, texts in corpora(n).items():
        vectors = np.asarray(await embedder.embed(texts), dtype=np.float32)
        rows += [[name, *r] for r in await _measure_corpus(url, vectors, queries)]
    return rows


async def _measure_corpus(url: str, vectors: np.ndarray, queries: np.ndarray) -> list[list[str]]:
    import asyncpg
    from sqlalchemy.engine import make_url

    from elephantasm.db.vectors import vector_literal

    n = len(vectors)
    dim = vectors.shape[1]
    stored = vectors.astype(np.float16).astype(np.float32)
    stored /= np.linalg.norm(stored, axis=1, keepdims=True)
    u = make_url(url)
    conn = await asyncpg.connect(user=u.username, database=u.database, host=u.query["host"])
    rows: list[list[str]] = []
    try:
        await conn.execute("DROP TABLE IF EXISTS ann")
        await conn.execute("CREATE TABLE ann (id int PRIMARY KEY, anima int, embedding halfvec, pad text)")
        data = "".join(f"{i}\t1\t{vector_literal(v)}\t{PAD}\n" for i, v in enumerate(vectors))
        await conn.copy_to_table("ann", source=io.BytesIO(data.encode()), columns=["id", "anima", "embedding", "pad"])
        # The index is what is measured: a small table must not be answered by a sequential scan.
        await conn.execute(
            "SET max_parallel_workers_per_gather = 0; SET hnsw.iterative_scan = relaxed_order; SET enable_seqscan = off"
        )
        for label, key, sql in _variants(dim):
            await conn.execute(f"CREATE INDEX ann_ix ON ann USING hnsw {key} WITH (m = 16, ef_construction = 40)")
            await conn.execute("VACUUM ANALYZE ann")
            size = await conn.fetchval("SELECT pg_relation_size('ann_ix')") / n
            for k in KS:
                await conn.execute(f"SET hnsw.ef_search = {min(1000, max(64, 2 * k))}")
                rows.append([f"{n:,}", label, str(k), f"{size:,.0f}", *await _run(conn, sql(k), k, queries, stored)])
            await conn.execute("DROP INDEX ann_ix")
    finally:
        await conn.close()
    return rows


async def _run(conn: Any, sql: str, k: int, queries: np.ndarray, stored: np.ndarray) -> list[str]:
    from elephantasm.db.vectors import vector_literal

    plan = "\n".join(r[0] for r in await conn.fetch("EXPLAIN " + sql.replace("$1", f"'{vector_literal(queries[0])}'")))
    if "ann_ix" not in plan:
        raise RuntimeError(f"the statement does not read the index:\n{plan}")
    recall, top10, times = [], [], []
    for q in queries:
        literal = vector_literal(q)
        await conn.fetch(sql, literal)  # warm-up
        started = time.perf_counter()
        got = {r["id"] for r in await conn.fetch(sql, literal)}
        times.append((time.perf_counter() - started) * 1000)
        cos = stored @ (q / np.linalg.norm(q))
        ranked = np.sort(cos)[::-1]
        mine = cos[sorted(got)]
        # Tie-aware: a returned row counts when it is as near as the exact k-th (equal vectors, e.g.
        # texts differing only in case, are interchangeable); TIE absorbs float rounding.
        recall.append(min(k, int((mine >= ranked[k - 1] - TIE).sum())) / k)
        top10.append(min(10, int((mine >= ranked[9] - TIE).sum())) / 10)
    return [f"{np.mean(recall):.3f}", f"{min(recall):.2f}", f"{np.mean(top10):.3f}", f"{statistics.median(times):.2f}"]


def run(size: str) -> Section:
    """Measure on a fresh embedded Postgres; returns the ``ann`` section."""
    n = ROWS[size]
    with migrated_database("elephantasm-bench-ann-") as (url, _):
        rows = asyncio.run(_measure(url, n))
    notes = [
        f"One anima of {n:,} rows of inject's generated memory summaries (a few hundred words in templates, so "
        "cosine margins are small: a hard case), then of up to 10,000 distinct chat turns of the quality generator; "
        "one index variant at a time (m 16, ef_construction 40), the configured embedder's vectors.",
        "recall = returned rows at least as near as the exact k-th (cosine of the stored vectors, ties counted) / k, "
        "mean over the queries; 'min' its worst query; 'top-10 kept' the same for the 10 nearest; p50 = median "
        "client wall time of the statement (after a warm-up pass).",
    ]
    return Section(
        name="ann",
        title=TITLE,
        headers=["corpus", "rows", "variant", "k", "index B/row", "recall@k", "min", "top-10 kept", "p50 ms"],
        rows=rows,
        notes=notes,
    )
