"""Cold pack compiles in-process: the API's CPU per compile and where a compile's wall time goes.

The ``inject`` benchmark measures latency over HTTP, which on a shared machine mostly measures the
neighbours. This one calls ``compile_pack`` directly against the same bulk-loaded anima
(:mod:`benchmarks.inject_data`) and reports, per memory count and with/without a query:

- API CPU per compile (``time.process_time`` of this process: what the compile costs the API
  process, barely moved by other processes' load), and wall time for reference;
- the wall time of each stage (candidate statements, relevance, scoring, packing, wire), summed
  per compile.

Every request has a new query (or recency half-life), so every call compiles.
"""

from __future__ import annotations

import asyncio
import statistics
import time
import uuid
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from benchmarks.harness import SECRET, migrated_database
from benchmarks.inject_data import QUERIES, load
from benchmarks.results import Section

TITLE = "cold pack compile in-process: API CPU per compile and stage times"


@dataclass(frozen=True)
class Size:
    """Memory counts and compiles per variant."""

    memories: tuple[int, ...]
    compiles: int


SIZES = {
    "tiny": Size(memories=(300,), compiles=5),
    "small": Size(memories=(1_000, 10_000), compiles=60),
    "full": Size(memories=(1_000, 10_000, 100_000), compiles=100),
}

# (module, function) pairs timed per compile; module paths relative to elephantasm.services.packs.
_STAGES = {
    "candidates": [
        ("candidates", n)
        for n in ("session_memories", "recent_turns", "long_term_memories", "pending_events", "superseded_memories")
    ]
    + [("candidates", "knowledge"), ("compiler", "fill_provenance")],
    "event cosines": [("compiler", "_event_cosines")],
    "relevance": [("compiler", "contextual_relevance")],
    "packing": [("compiler", "pack")],
    "layer tokens": [("compiler", "layer_tokens")],
    "wire": [("compiler", "build_pack")],
}


def _instrument(times: dict[str, list[float]]) -> Callable[[], None]:
    """Wrap each stage function to add its wall time to ``times[stage]``; returns the undo."""
    import importlib

    undo: list[tuple[Any, str, Any]] = []
    for stage, targets in _STAGES.items():
        for module_name, fn in targets:
            module = importlib.import_module(f"elephantasm.services.packs.{module_name}")
            original = getattr(module, fn)
            undo.append((module, fn, original))
            setattr(module, fn, _timed(original, times[stage]))

    def restore() -> None:
        for module, fn, original in undo:
            setattr(module, fn, original)

    return restore


def _timed(fn: Any, sink: list[float]) -> Any:
    if asyncio.iscoroutinefunction(fn):

        async def awaited(*a: Any, **k: Any) -> Any:
            t = time.perf_counter()
            try:
                return await fn(*a, **k)
            finally:
                sink.append(time.perf_counter() - t)

        return awaited

    def plain(*a: Any, **k: Any) -> Any:
        t = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            sink.append(time.perf_counter() - t)

    return plain


async def _measure(url: str, work: Any, n: int, compiles: int) -> list[list[str]]:
    from sqlalchemy import text

    from elephantasm.runtime import build_runtime
    from elephantasm.services.packs import compiler
    from elephantasm.services.packs.service import build_request
    from elephantasm.settings import Settings

    settings = Settings(database_url=url, data_dir=work, secret_key=SECRET, dreamer_enabled=False)
    rt = build_runtime(settings, database_url=url)
    deps = rt.packs
    rows: list[list[str]] = []
    try:
        async with rt.engine.begin() as conn:
            org = (
                await conn.execute(
                    text("INSERT INTO orgs (id, name) VALUES (:id, 'bench') RETURNING id"), {"id": uuid.uuid4()}
                )
            ).scalar_one()
            anima = (
                await conn.execute(
                    text(
                        "INSERT INTO animas (id, org_id, name, meta, state_version, created_at, updated_at) "
                        "VALUES (:id, :org, 'bench', '{}', 1, now(), now()) RETURNING id"
                    ),
                    {"id": uuid.uuid4(), "org": org},
                )
            ).scalar_one()
        await load(url, str(org), str(anima), n)
        for with_query in (True, False):

            def request(i: int, wq: bool = with_query) -> Any:
                if wq:
                    return build_request(deps, org, anima, query=f"{QUERIES[i % len(QUERIES)]} {i}")
                return build_request(deps, org, anima, overrides={"recency_half_life_hours": 72 + i / 1000})

            for i in range(5):  # warm: plans, statement caches, embedder and token memos
                await compiler.compile_pack(deps, request(10_000 + i))
            stage_times: dict[str, list[float]] = defaultdict(list)
            restore = _instrument(stage_times)
            cpu, wall = [], []
            try:
                for i in range(compiles):
                    c0, t0 = time.process_time(), time.perf_counter()
                    await compiler.compile_pack(deps, request(i))
                    cpu.append(time.process_time() - c0)
                    wall.append(time.perf_counter() - t0)
            finally:
                restore()
            stages = " · ".join(f"{k} {1000 * sum(v) / compiles:.1f}" for k, v in stage_times.items())
            rows.append(
                [
                    f"{n:,}",
                    "with query" if with_query else "no query",
                    str(compiles),
                    f"{1000 * statistics.median(cpu):.2f}",
                    f"{1000 * min(cpu):.2f}",
                    f"{1000 * statistics.median(wall):.2f}",
                    stages,
                ]
            )
    finally:
        await rt.close()
    return rows


def run(size: str) -> Section:
    """Compile in-process for every memory count and report CPU and stage times."""
    s = SIZES[size]
    rows: list[list[str]] = []
    for n in s.memories:
        with migrated_database("elephantasm-compile-cpu-") as (url, work):
            rows += asyncio.run(_measure(url, work, n, s.compiles))
    notes = [
        "in-process (no HTTP); API CPU = process_time of the compiling process per compile (median, min); "
        "wall includes waiting for Postgres, which shares the machine's cores with everything else.",
        "stage columns: wall ms per compile, summed over the stage's calls (candidates = every candidate statement, "
        "and the served items' provenance).",
    ]
    headers = [
        "memories",
        "variant",
        "compiles",
        "API CPU p50 ms",
        "API CPU min ms",
        "wall p50 ms",
        "stages (wall ms per compile)",
    ]
    return Section(name="compile-cpu", title=TITLE, headers=headers, rows=rows, notes=notes)
