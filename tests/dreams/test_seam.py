"""The dream services take a ``DreamDeps`` (built at the edge by ``Runtime.dreams``), never the ``Runtime``."""

from __future__ import annotations

import ast
from pathlib import Path

from elephantasm.runtime import Runtime
from elephantasm.services.dreams.deps import DreamLimits
from tests.dreams.helpers import variant

DREAMS = Path(__file__).resolve().parents[2] / "elephantasm" / "services" / "dreams"


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
    return names


def test_no_dream_service_imports_the_runtime() -> None:
    modules = sorted(DREAMS.glob("*.py"))
    assert len(modules) > 10  # the package is where this test thinks it is
    offenders = {p.name for p in modules if any(n.startswith("elephantasm.runtime") for n in _imports(p))}
    assert offenders == set()


def test_runtime_dreams_carries_the_runtimes_settings_clock_and_engine(runtime: Runtime) -> None:
    rt = variant(runtime, dreamer_chunk_events=7, curation_max_merges=3)
    deps = rt.dreams
    assert deps.limits == DreamLimits.of(rt.settings)
    assert deps.limits.dreamer_chunk_events == 7 and deps.limits.curation.max_merge_groups == 3
    assert deps.clock is rt.clock and deps.distiller is rt.dream_engine and deps.tasks is rt.dream_tasks
    assert deps.pool is rt.background.engine  # runs are background work: the long-statement pool
