"""Postgres storage per 1,000 conversations after distillation.

Ingests a sample of generated conversations (~20 sessions × ~20 turns each, the quality
benchmark's generator) into one fresh deployment, one anima per conversation, dreams every anima
with the offline engine until nothing is pending, then sums ``pg_total_relation_size`` (heap +
TOAST + indexes) over every table of the schema. The figure per 1,000 conversations is the growth
over the freshly migrated database divided by the sample size, times 1,000: a linear
extrapolation, stated as such. Measured twice: as left by ingest + dreaming (dead tuples from the
dreamer's updates included, as a live database carries them) and after ``VACUUM FULL``.

Aim (recorded, not asserted): ≤ 500 MB per 1,000 conversations.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from benchmarks.harness import deployment
from benchmarks.quality.client import MemoryClient
from benchmarks.quality.db import fetch, run_sql
from benchmarks.quality.generator import GeneratorConfig, generate
from benchmarks.quality.runner import shift_to
from benchmarks.results import Section

TITLE = "Postgres bytes per 1,000 conversations after distillation"
ONE_ANIMA_TITLE = "Postgres bytes per 1,000 conversations after distillation, all in one anima"
AIM_MB = 500
SIZES = {
    "tiny": GeneratorConfig(seed=11, conversations=2, sessions=3, turns_per_session=8, facts=4, updates=1, echoes=1),
    "small": GeneratorConfig(seed=11, conversations=10, sessions=20, turns_per_session=20),
    "full": GeneratorConfig(seed=11, conversations=30, sessions=20, turns_per_session=20),
}

SIZES_SQL = """
SELECT c.relname, pg_table_size(c.oid), pg_indexes_size(c.oid), pg_total_relation_size(c.oid)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
ORDER BY c.relname
"""

Sizes = dict[str, tuple[int, int, int, int]]  # table → (rows, heap+toast, indexes, total)


def table_sizes(database_url: str) -> Sizes:
    """Rows and bytes of every table in the public schema."""
    rows = fetch(database_url, SIZES_SQL)
    counts = run_sql(database_url, [(f'SELECT count(*) FROM "{name}"', {}) for name, *_ in rows])
    return {
        name: (int(n[0][0]), int(heap), int(idx), int(total))
        for (name, heap, idx, total), n in zip(rows, counts, strict=True)
    }


WIDE_TABLES = ("events", "memories", "knowledge")

INDEX_SQL = """
SELECT t.relname, i.relname, pg_relation_size(i.oid)
FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
JOIN pg_namespace n ON n.oid = t.relnamespace
WHERE n.nspname = 'public' AND t.relname IN ('events', 'memories', 'knowledge', 'dream_actions')
ORDER BY t.relname, i.relname
"""


def index_sizes(database_url: str) -> dict[str, int]:
    """Bytes of each index of the wide tables and the dream journal (``table.index``)."""
    return {f"{t}.{i}": int(b) for t, i, b in fetch(database_url, INDEX_SQL)}


def column_bytes(database_url: str, table: str, top: int = 6) -> list[tuple[str, float]]:
    """The ``top`` widest columns of ``table`` by mean stored bytes per row (``pg_column_size``)."""
    cols = [
        c
        for (c,) in fetch(
            database_url,
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_schema = 'public' AND table_name = :t ORDER BY ordinal_position",
            t=table,
        )
    ]
    if not cols:
        return []
    sql = "SELECT " + ", ".join(f'coalesce(avg(pg_column_size("{c}")), 0)' for c in cols) + f' FROM "{table}"'
    (row,) = fetch(database_url, sql)
    return sorted(((c, float(v)) for c, v in zip(cols, row, strict=True)), key=lambda p: -p[1])[:top]


def _mb(n: float) -> str:
    return f"{n / 1e6:,.1f}"


def _kb(n: float) -> str:
    return f"{n / 1e3:,.0f}"


def run(size: str, *, one_anima: bool = False) -> Section:
    """Ingest, dream, measure, vacuum, measure again. ``one_anima``: every conversation goes to one
    anima (past the size thresholds at ``--size full``) instead of one anima each."""
    cfg = SIZES[size]
    ds = generate(cfg)
    end = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1)
    timings = {}
    with deployment() as d:
        empty = table_sizes(d.database_url)
        client = MemoryClient(d.base_url, d.headers)
        try:
            started = time.perf_counter()
            if one_anima:
                shared = client.create_anima("storage-all")
                animas = [shared] * len(ds.conversations)
            else:
                animas = [client.create_anima(f"storage-{c.id}") for c in ds.conversations]
            for anima, conv in zip(animas, ds.conversations, strict=True):
                client.ingest(anima, conv, shift_to(conv, end))
            timings["ingest"] = time.perf_counter() - started
            started = time.perf_counter()
            for anima in dict.fromkeys(animas):
                client.dream(anima)
            timings["dream"] = time.perf_counter() - started
        finally:
            client.close()
        live = table_sizes(d.database_url)
        indexes = index_sizes(d.database_url)
        flags = fetch(
            d.database_url, "SELECT count(*), bool_and(vectors_indexed), bool_and(events_indexed) FROM animas"
        )
        run_sql(d.database_url, [("VACUUM FULL ANALYZE", {})], autocommit=True)
        packed = table_sizes(d.database_url)
        widths = {t: column_bytes(d.database_url, t) for t in WIDE_TABLES}
        pg_version = d.pg_version
    section = _section(size, cfg, ds, empty, live, packed, widths, timings, pg_version)
    if one_anima:
        section.name, section.title = "storage-one-anima", ONE_ANIMA_TITLE
        section.notes[0] = section.notes[0].replace("one anima each", "all in one anima")
        (count, vectors, events), *_ = flags
        section.notes.insert(
            1,
            f"animas: {count}; in the vector, pack and full-text indexes: {vectors}; in the event time indexes: {events}.",
        )
        section.notes.insert(
            -1,
            "as left includes the dead row versions of the flips (every memory and event of the anima rewritten once, "
            "when it crossed a threshold) until a vacuum.",
        )
    n = len(ds.conversations)
    section.notes.insert(
        -1,
        "indexes as left, KB/conv: " + ", ".join(f"{name} {_kb(b / n)}" for name, b in indexes.items() if b > 8192 * 2),
    )
    return section


def _section(
    size: str,
    cfg: GeneratorConfig,
    ds,
    empty: Sizes,
    live: Sizes,
    packed: Sizes,  # type: ignore[no-untyped-def]
    widths: dict[str, list[tuple[str, float]]],
    timings: dict[str, float],
    pg_version: str,
) -> Section:
    n = len(ds.conversations)
    turns = sum(len(c.turns()) for c in ds.conversations)
    zero = (0, 0, 0, 0)
    rows = []
    for name in sorted(live, key=lambda t: -(live[t][3] - empty.get(t, zero)[3])):
        (r, heap, idx, total), base = live[name], empty.get(name, zero)
        if total == base[3] and r == base[0]:
            continue  # untouched by this workload
        rows.append(
            [
                name,
                f"{r - base[0]:,}",
                _kb((heap - base[1]) / n),
                _kb((idx - base[2]) / n),
                _kb((total - base[3]) / n),
                _kb((packed[name][3] - base[3]) / n),
            ]
        )
    grow_live = sum(v[3] for v in live.values()) - sum(v[3] for v in empty.values())
    grow_packed = sum(v[3] for v in packed.values()) - sum(v[3] for v in empty.values())
    rows.append(["**all tables, growth over empty schema**", "", "", "", _kb(grow_live / n), _kb(grow_packed / n)])
    per_1000_live, per_1000_packed = grow_live / n * 1000, grow_packed / n * 1000
    verdict = "met" if per_1000_live <= AIM_MB * 1e6 else "MISSED"
    notes = [
        f"sample: {n} generated conversations (seed {cfg.seed}), {turns:,} turns "
        f"(~{turns / n:.0f} per conversation: {cfg.sessions} sessions × ~{cfg.turns_per_session} turns), "
        "one anima each, distilled by the offline engine; packs never compiled (memory_packs/pack_snapshots empty).",
        f"per 1,000 conversations (linear extrapolation from the sample of {n}): "
        f"**{_mb(per_1000_live)} MB** as left after ingest + dreaming, {_mb(per_1000_packed)} MB after VACUUM FULL; "
        f"per event ≈ {grow_live / turns:,.0f} bytes.",
        f"aim ≤ {AIM_MB} MB per 1,000 conversations: {verdict} (as left after dreaming).",
        "per-table columns are growth over the empty schema in KB per conversation; 'rows' were added by the sample; "
        "heap includes TOAST.",
        *[
            f"{t}: mean stored bytes per row, widest columns: " + ", ".join(f"{c} {b:,.0f}" for c, b in w)
            for t, w in widths.items()
            if w and w[0][1] > 0
        ],
        f"time: ingest {timings['ingest']:.1f} s, dream {timings['dream']:.1f} s (measured, not asserted).",
    ]
    return Section(
        name="storage",
        title=TITLE,
        headers=["table", "rows", "heap KB/conv", "index KB/conv", "total KB/conv", "after VACUUM FULL KB/conv"],
        rows=rows,
        notes=notes,
        environment={"PostgreSQL": pg_version, "dream engine": "offline"},
    )
