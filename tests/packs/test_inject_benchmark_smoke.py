"""``python -m benchmarks inject|compile-cpu --size tiny`` run end to end and write their sections
(no figures asserted)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.support.servers import REPO_ROOT


def _run_tiny(name: str, tmp_path: Path) -> str:
    """Run benchmark ``name`` at its tiny size; the markdown it wrote."""
    out = tmp_path / "RESULTS.md"
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks", name, "--size", "tiny", "--out", str(out)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out.read_text()


def test_inject_benchmark_writes_its_table(tmp_path: Path) -> None:
    text = _run_tiny("inject", tmp_path)
    assert "<!-- section:inject -->" in text and "| memories | phase |" in text
    for phase in (
        "GET /api/health",
        "latest, cache hit, no query",
        "cold compile, with query",
        "cold compile, no query",
    ):
        assert f"| {phase} |" in text, phase
    assert "hit ÷ health p50, median [range] of 2 rounds" in text
    # Every cold request of every round compiled (the round number keeps later rounds off the cache):
    # 2 rounds × 2 cold phases × (10 + 3 warm-up) requests, plus the two hit phases' first requests.
    compiles = int(re.search(r"over ([\d,]+) compiles", text).group(1).replace(",", ""))
    assert compiles >= 2 * 2 * 13, text


def test_compile_cpu_benchmark_writes_its_table(tmp_path: Path) -> None:
    """Both variants, and the stage columns."""
    text = _run_tiny("compile-cpu", tmp_path)
    assert "<!-- section:compile-cpu -->" in text and "| memories | variant |" in text
    for variant in ("with query", "no query"):
        assert f"| 300 | {variant} | 5 |" in text, variant
    assert "candidates " in text and "packing " in text and "wire " in text
