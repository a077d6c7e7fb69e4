"""``python -m benchmarks ui`` runs end to end at its smallest size (no figure is asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.servers import REPO_ROOT


def test_ui_benchmark_writes_its_table(tmp_path: Path) -> None:
    out = tmp_path / "RESULTS.md"
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks", "ui", "--size", "tiny", "--out", str(out)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = out.read_text()
    assert "<!-- section:ui -->" in text and "| memories | page | requests |" in text
    for page in ("animas", "memories, search", "knowledge item + history", "pack composer, query"):
        assert f"| {page} |" in text, page
    assert "aim every page p50 < 200 ms" in text
