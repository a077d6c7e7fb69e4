"""The ``quality`` benchmark: the generated dataset at a size, through a fresh deployment.

Also runs any dataset file in the generic format (``python -m benchmarks.quality --dataset F``).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence

from benchmarks.harness import deployment
from benchmarks.quality.dataset import Dataset
from benchmarks.quality.dense import SyncEmbedder, configured_embedder
from benchmarks.quality.duo import DuoConfig
from benchmarks.quality.generator import GeneratorConfig, generate
from benchmarks.quality.report import section
from benchmarks.quality.runner import BUDGETS, evaluate, evaluate_baselines
from benchmarks.results import Section

TITLE = "Evidence recall (ER_any / ER_all) and stale rate vs raw-turn baselines"

SIZES: dict[str, GeneratorConfig] = {
    "tiny": GeneratorConfig(
        conversations=1, sessions=3, turns_per_session=8, facts=4, updates=1, paraphrases=1, spreads=1, echoes=1
    ),
    "small": GeneratorConfig(
        conversations=3, sessions=10, turns_per_session=20, facts=10, updates=3, paraphrases=4, spreads=3
    ),
    "full": GeneratorConfig(
        conversations=8, sessions=20, turns_per_session=20, facts=12, updates=4, paraphrases=5, spreads=4
    ),
}


def describe(ds: Dataset) -> str:
    """One line on what was evaluated."""
    turns = sum(len(c.turns()) for c in ds.conversations)
    sessions = sum(len(c.sessions) for c in ds.conversations)
    kinds = Counter(q.kind for q in ds.questions)
    return (
        f"{len(ds.conversations)} conversations, {sessions} sessions, {turns:,} turns, {len(ds.questions)} "
        "questions (" + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) + ")"
    )


def run_dataset(
    ds: Dataset,
    *,
    name: str,
    dataset_note: str,
    budgets: Sequence[int] = BUDGETS,
    preset: str | None = None,
    embedder: str | None = None,
    baselines_only: bool = False,
) -> Section:
    """Evaluate ``ds`` against a fresh deployment (offline dream engine) and build its section.

    ``embedder`` (a name ``ELEPHANTASM_EMBEDDER`` accepts) is used by both the server and the dense
    baseline; by default both take the configured one (environment or the project default).
    ``baselines_only`` skips the server: the raw-turn baselines alone, in seconds.
    """
    started = time.perf_counter()
    dense = SyncEmbedder(configured_embedder(embedder))  # an unknown name fails here, before any server starts
    if baselines_only:
        try:
            ev = evaluate_baselines(ds, embedder=dense, budgets=budgets)
        finally:
            dense.close()
        return section(
            ds,
            ev,
            budgets,
            name=name,
            title=TITLE,
            dataset_note=dataset_note,
            environment={"embedder (dense baseline)": ev.dense_embedder},
        )
    try:
        with deployment(**({"ELEPHANTASM_EMBEDDER": embedder} if embedder else {})) as d:
            ev = evaluate(
                ds, d.base_url, d.headers, budgets=budgets, preset=preset, database_url=d.database_url, embedder=dense
            )
            pg_version = d.pg_version
    finally:
        dense.close()
    print(f"   evaluated in {time.perf_counter() - started:.0f} s", flush=True)
    return section(
        ds,
        ev,
        budgets,
        name=name,
        title=TITLE,
        dataset_note=dataset_note,
        environment={
            "PostgreSQL": pg_version,
            "dream engine": "offline",
            "embedder (server and dense baseline)": ev.dense_embedder,
        },
    )


def generated_note(size: str, ds: Dataset) -> str:
    """What the generated dataset ``ds`` of ``size`` is, for the report."""
    cfg = SIZES[size]
    return (
        f"dataset: generated (`benchmarks/quality/generator.py`, seed {cfg.seed}, size `{size}`): "
        f"{describe(ds)}; per conversation {cfg.facts} slot facts ({cfg.updates} later updated, "
        f"{cfg.paraphrases} paraphrased, the rest literal) and {cfg.spreads} facts spread over 2-3 turns; "
        f"{cfg.noisy:.0%} of sessions in noisy chat style (short lowercase messages, slang, typos, "
        "interleaved threads)."
    )


def duo_note(ds: Dataset) -> str:
    """What the two-person dataset ``ds`` is, for the report."""
    return (
        f"dataset: two-person chats (`benchmarks/quality/duo.py`, seed {DuoConfig().seed}): {describe(ds)}; both "
        "names in most turns, every fact wrapped in small talk, some told with relative time, every question "
        "naming a participant and one rare content word."
    )


def run(size: str, embedder: str | None = None) -> Section:
    """Generate the dataset for ``size`` and evaluate it (registry entry point)."""
    ds = generate(SIZES[size])
    return run_dataset(ds, name="quality", dataset_note=generated_note(size, ds), embedder=embedder)
