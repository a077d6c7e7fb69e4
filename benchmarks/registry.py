"""The benchmarks ``python -m benchmarks`` knows. Adding one is one line here plus its module.

A benchmark module exposes ``TITLE: str`` and ``run(size: str) -> Section | list[Section]`` (see
:class:`benchmarks.results.Section`); ``size`` is one of :data:`SIZES`. Modules are imported lazily,
so one benchmark's heavy imports never slow another down.
"""

from __future__ import annotations

import importlib
from types import ModuleType

SIZES = ("tiny", "small", "full")
"""tiny: seconds, for the smoke test; small: a quick local look; full: the recorded figures."""

BENCHMARKS: dict[str, str] = {
    "ingest": "benchmarks.ingest",
    "inject": "benchmarks.inject",
    "compile-cpu": "benchmarks.compile_cpu",
    "dreamer": "benchmarks.dreamer",
    "quality": "benchmarks.quality",
    "knowledge": "benchmarks.knowledge",
    "storage": "benchmarks.storage",
    "storage-one-anima": "benchmarks.storage_one_anima",
    "ui": "benchmarks.ui",
    "kv": "benchmarks.kv",
    "kv-days": "benchmarks.kv_days",
    "spaces": "benchmarks.spaces",
    "ann": "benchmarks.ann",
}


def load(name: str) -> ModuleType:
    """The module of benchmark ``name``."""
    try:
        return importlib.import_module(BENCHMARKS[name])
    except KeyError:
        raise SystemExit(f"unknown benchmark {name!r}; known: {', '.join(BENCHMARKS)}, all") from None
