"""The dream services take a ``DreamDeps`` built at the edge by ``Runtime.dreams`` (that no service
imports the ``Runtime`` is a rule of ``tests/test_layering.py``)."""

from __future__ import annotations

from elephantasm.runtime import Runtime
from elephantasm.services.dreams.deps import DreamLimits
from tests.dreams.helpers import variant


def test_runtime_dreams_carries_the_runtimes_settings_clock_and_engine(runtime: Runtime) -> None:
    rt = variant(runtime, dreamer_chunk_events=7, curation_max_merges=3)
    deps = rt.dreams
    assert deps.limits == DreamLimits.of(rt.settings)
    assert deps.limits.dreamer_chunk_events == 7 and deps.limits.curation.max_merge_groups == 3
    assert deps.clock is rt.clock and deps.distiller is rt.dream_engine and deps.tasks is rt.dream_tasks
    assert deps.pool is rt.background.engine  # runs are background work: the long-statement pool
