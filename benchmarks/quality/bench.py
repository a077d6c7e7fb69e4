"""The ``quality`` benchmark: the generated dataset at a size, through a fresh deployment.

Also runs any dataset file in the generic format (``python -m benchmarks.quality --dataset F``).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence

from benchmarks.harness import deployment
from benchmarks.quality.dataset import Dataset
from benchmarks.quality.generator import GeneratorConfig, generate
from benchmarks.quality.report import section
from benchmarks.quality.runner import BUDGETS, evaluate
from benchmarks.results import Section

TITLE = "Evidence recall (ER@N) and stale rate vs raw-turn baselines"

SIZES: dict[str, GeneratorConfig] = {
    "tiny": GeneratorConfig(conversations=1, sessions=3, turns_per_session=8, facts=4, updates=1, echoes=1),
    "small": GeneratorConfig(conversations=3, sessions=10, turns_per_session=20, facts=10, updates=3),
    "full": GeneratorConfig(conversations=8, sessions=20, turns_per_session=20, facts=12, updates=4),
}


def describe(ds: Dataset) -> str:
    """One line on what was evaluated."""
    turns = sum(len(c.turns()) for c in ds.conversations)
    sessions = sum(len(c.sessions) for c in ds.conversations)
    kinds = Counter(q.kind for q in ds.questions)
    return (f"{len(ds.conversations)} conversations, {sessions} sessions, {turns:,} turns, {len(ds.questions)} "
            "questions (" + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) + ")")


def run_dataset(ds: Dataset, *, name: str, dataset_note: str, budgets: Sequence[int] = BUDGETS,
                preset: str | None = None) -> Section:
    """Evaluate ``ds`` against a fresh deployment (offline dream engine) and build its section."""
    started = time.perf_counter()
    with deployment() as d:
        ev = evaluate(ds, d.base_url, d.headers, budgets=budgets, preset=preset, database_url=d.database_url)
        pg_version = d.pg_version
    print(f"   evaluated in {time.perf_counter() - started:.0f} s", flush=True)
    return section(ds, ev, budgets, name=name, title=TITLE, dataset_note=dataset_note,
                   environment={"PostgreSQL": pg_version, "dream engine": "offline"})


def run(size: str) -> Section:
    """Generate the dataset for ``size`` and evaluate it (registry entry point)."""
    cfg = SIZES[size]
    ds = generate(cfg)
    note = (f"dataset: generated (`benchmarks/quality/generator.py`, seed {cfg.seed}, size `{size}`): "
            f"{describe(ds)}; each fact stated once, {cfg.updates} per conversation later updated.")
    return run_dataset(ds, name="quality", dataset_note=note)
