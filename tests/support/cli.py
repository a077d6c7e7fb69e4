"""Run the ``elephantasm`` CLI in a subprocess over the test database."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import TEST_SECRET
from tests.support.servers import REPO_ROOT


def cli_env(pg_url: str, data_dir: Path, **extra: str) -> dict[str, str]:
    """This process's environment plus the test database, secret and data dir (and ``extra``)."""
    return {
        **os.environ,
        "ELEPHANTASM_DATABASE_URL": pg_url,
        "ELEPHANTASM_SECRET_KEY": TEST_SECRET,
        "ELEPHANTASM_DATA_DIR": str(data_dir),
        "COLUMNS": "250",  # rich tables must not wrap or elide ids in a narrow pipe
        **extra,
    }


def run_cli(
    pg_url: str, data_dir: Path, *args: str, timeout: float = 120, **extra_env: str
) -> subprocess.CompletedProcess[str]:
    """``python -m elephantasm.cli.main ARGS`` over the test database; output captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "elephantasm.cli.main", *args],
        env=cli_env(pg_url, data_dir, **extra_env),
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
