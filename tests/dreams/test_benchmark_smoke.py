"""``python -m benchmarks dreamer --size tiny`` runs end to end (figures are recorded, never asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.servers import REPO_ROOT


def test_dreamer_benchmark_writes_its_section(tmp_path: Path) -> None:
    out = tmp_path / "RESULTS.md"
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks", "dreamer", "--size", "tiny", "--out", str(out)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = out.read_text()
    assert "<!-- section:dreamer -->" in text and "<!-- /section:dreamer -->" in text
    assert "| offline: events/s end to end, median |" in text and "| llm: calls per 100 events |" in text
    each_run = next(line for line in text.splitlines() if line.startswith("| offline: events/s, each run |"))
    assert each_run.count(" / ") == 2  # three offline runs: the median and spread are of something
    assert "Runs: offline completed, llm completed." in text
