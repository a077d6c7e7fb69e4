"""The benchmark runner works end to end at its smallest size (no figures are asserted)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from benchmarks.results import Section, write_section
from tests.support.servers import REPO_ROOT


def _run_tiny(benchmark: str, out: Path) -> None:
    """``python -m benchmarks <benchmark> --size tiny --out <out>``, which must succeed."""
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks", benchmark, "--size", "tiny", "--out", str(out)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ingest_benchmark_writes_its_table(tmp_path: Path) -> None:
    """``python -m benchmarks ingest --size tiny`` runs every phase and writes the ingest section."""
    out = tmp_path / "RESULTS.md"
    _run_tiny("ingest", out)
    text = out.read_text()
    assert "<!-- section:ingest -->" in text and "<!-- /section:ingest -->" in text
    assert "| phase | requests |" in text
    for phase in ("GET /api/health", "single event", "batch of"):
        assert f"| {phase}" in text, phase
    assert "command: `python -m benchmarks ingest --size tiny" in text
    assert "PostgreSQL 18" in text
    assert re.search(r"CPU probe before \d+ ms one core, \d+ ms on each of \d+ at once \(×[\d.]+\); after ", text), text


def test_a_rerun_replaces_its_section_and_leaves_the_others(tmp_path: Path) -> None:
    """A benchmark's rerun replaces its own section in RESULTS.md instead of appending a second one."""
    out = tmp_path / "RESULTS.md"
    write_section(out, Section("ingest", "first", ["a"], [["1"]]), "python -m benchmarks ingest")
    write_section(out, Section("storage", "other", ["b"], [["2"]]), "python -m benchmarks storage")
    write_section(out, Section("ingest", "second", ["a"], [["3"]]), "python -m benchmarks ingest")
    text = out.read_text()
    assert text.count("<!-- section:ingest -->") == 1 and "| 3 |" in text and "| 1 |" not in text
    assert text.count("<!-- section:storage -->") == 1 and "| 2 |" in text
    assert text.index("section:ingest") < text.index("section:storage")


def test_storage_of_one_anima_holds_every_conversation_in_one_anima(tmp_path: Path) -> None:
    """``python -m benchmarks storage-one-anima --size tiny`` ingests every conversation into one anima
    and writes its own section (next to, never over, ``storage``'s)."""
    out = tmp_path / "RESULTS.md"
    _run_tiny("storage-one-anima", out)
    text = out.read_text()
    assert "<!-- section:storage-one-anima -->" in text and "<!-- section:storage -->" not in text
    assert "all in one anima" in text and "- animas: 1;" in text
    assert re.search(r"\| memories \| [\d,]+ \|", text), text
