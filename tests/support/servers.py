"""Start real processes for tests: the embedded Postgres and the API server as a subprocess."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

REPO_ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    """A free TCP port on loopback."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_env(database_url: str, secret: str, data_dir: Path, **extra: str) -> dict[str, str]:
    """Environment for a server subprocess sharing the test database and key secret."""
    env = dict(os.environ)
    env.update(
        ELEPHANTASM_DATABASE_URL=database_url,
        ELEPHANTASM_SECRET_KEY=secret,
        ELEPHANTASM_DATA_DIR=str(data_dir),
        ELEPHANTASM_DREAMER_ENABLED="false",
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


def start_server(env: dict[str, str], port: int, log_path: Path) -> subprocess.Popen:
    """Run ``elephantasm serve`` on ``port`` and wait until ``/api/health`` answers."""
    log = open(log_path, "ab")  # noqa: SIM115 - the process owns it until it exits
    proc = subprocess.Popen(
        [sys.executable, "-m", "elephantasm.cli.main", "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        cwd=REPO_ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}; see {log_path}:\n{log_path.read_text()[-3000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"server did not become healthy; see {log_path}")


def stop_server(proc: subprocess.Popen) -> None:
    """Terminate politely, then kill."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
