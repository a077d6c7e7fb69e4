"""``python -m benchmarks inject --size tiny`` runs end to end and writes its section (no figures asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.servers import REPO_ROOT


def test_inject_benchmark_writes_its_table(tmp_path: Path) -> None:
    out = tmp_path / "RESULTS.md"
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks", "inject", "--size", "tiny", "--out", str(out)],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = out.read_text()
    assert "<!-- section:inject -->" in text and "| memories | phase |" in text
    for phase in ("GET /api/health", "latest, cache hit, no query", "cold compile, with query", "cold compile, no query"):
        assert f"| {phase} |" in text, phase
    assert "hit ÷ health p50" in text
