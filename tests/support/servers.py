"""Start real processes for tests: the API server as a subprocess over the test database.

The process handling itself lives in ``benchmarks/harness.py`` (benchmarks never import tests,
so the shared code sits there).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from benchmarks import harness
from benchmarks.harness import REPO_ROOT, free_port, stop_server

__all__ = ["REPO_ROOT", "free_port", "server_env", "start_server", "stop_server"]


def server_env(database_url: str, secret: str, data_dir: Path, **extra: str) -> dict[str, str]:
    """Environment for a server subprocess sharing the test database and key secret."""
    env = dict(os.environ)
    env.update(
        ELEPHANTASM_DATABASE_URL=database_url,
        ELEPHANTASM_SECRET_KEY=secret,
        ELEPHANTASM_DATA_DIR=str(data_dir),
        ELEPHANTASM_DREAMER_ENABLED="false",
        ELEPHANTASM_DB_STATEMENT_TIMEOUT_SECONDS="120",  # a busy test machine is no stuck database
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


def start_server(env: dict[str, str], port: int, log_path: Path) -> subprocess.Popen:
    """Run ``elephantasm serve`` on ``port`` (dreamer per the env) and wait until it is healthy."""
    return harness.start_server(env, port, log_path, serve_args=())
