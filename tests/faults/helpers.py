"""Processes for the fault tests: a real ``elephantasm serve`` over an embedded Postgres of its own, and
the postmaster of a data dir (find, stop, continue, kill) — always left running or gone, never stopped."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psutil

from benchmarks import harness
from elephantasm.db.embedded import PG_MAJOR
from tests.support.servers import free_port, stop_server

SECRET = "fault-test-secret"


def pgdata_of(data_dir: Path) -> Path:
    """The embedded server's data directory under a data dir."""
    return data_dir / f"pg{PG_MAJOR}"


def postmaster_pid(pgdata: Path) -> int | None:
    """The pid ``postmaster.pid`` names, if any."""
    try:
        return int((pgdata / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def postgres_processes(pgdata: Path) -> list[psutil.Process]:
    """The postmaster of ``pgdata`` (as its pid file names it, or found by its command line) and its children."""
    found: dict[int, psutil.Process] = {}
    pid = postmaster_pid(pgdata)
    candidates = [psutil.Process(pid)] if pid and psutil.pid_exists(pid) else []
    for proc in psutil.process_iter(attrs=("name", "cmdline")):
        cmdline = proc.info["cmdline"] or []
        if proc.info["name"] == "postgres" and str(pgdata) in cmdline:
            candidates.append(proc)
    for proc in candidates:
        with contextlib.suppress(psutil.NoSuchProcess):
            if proc.name() != "postgres":
                continue
            found[proc.pid] = proc
            for child in proc.children(recursive=True):
                found[child.pid] = child
    return list(found.values())


def postmasters(pgdata: Path) -> list[psutil.Process]:
    """Running (not zombie) postmasters of ``pgdata``: its postgres processes whose parent is not one."""
    out = []
    for proc in postgres_processes(pgdata):
        with contextlib.suppress(psutil.NoSuchProcess):
            parent = proc.parent()
            if proc.status() != psutil.STATUS_ZOMBIE and (parent is None or parent.name() != "postgres"):
                out.append(proc)
    return out


def signal_all(procs: list[psutil.Process], sig: int) -> None:
    """Send ``sig`` to each process that still exists."""
    for proc in procs:
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.send_signal(sig)


def kill_leftovers(pgdata: Path) -> None:
    """Continue and kill whatever Postgres of ``pgdata`` still runs (cleanup after a test)."""
    procs = postgres_processes(pgdata)
    signal_all(procs, signal.SIGCONT)
    signal_all(procs, signal.SIGKILL)
    psutil.wait_procs(procs, timeout=10)


def fresh_data_dir(prefix: str) -> Path:
    """An empty data dir the embedded Postgres user can reach."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    path.chmod(0o755)
    return path


def embedded_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """Environment for a CLI process using the embedded Postgres of ``data_dir`` (no external URL)."""
    env = {k: v for k, v in os.environ.items() if k != "ELEPHANTASM_DATABASE_URL"}
    env.update(
        ELEPHANTASM_DATA_DIR=str(data_dir),
        ELEPHANTASM_SECRET_KEY=SECRET,
        ELEPHANTASM_DREAMER_ENABLED="false",
        PYTHONUNBUFFERED="1",
        **extra,
    )
    return env


@dataclass
class EmbeddedServer:
    """``elephantasm serve`` over the embedded Postgres of its own data dir."""

    data_dir: Path
    env: dict[str, str]
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen | None = None
    api_key: str = ""

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pgdata(self) -> Path:
        return pgdata_of(self.data_dir)

    @property
    def log_path(self) -> Path:
        return self.data_dir / "serve.log"

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"}

    @property
    def database_url(self) -> str:
        lines = (self.pgdata / "postmaster.pid").read_text().splitlines()
        return f"postgresql+asyncpg://postgres:@/postgres?host={lines[4] or self.pgdata}"

    def start(self) -> None:
        """Start ``serve`` and wait until it is healthy; the first start records the bootstrap key."""
        self.proc = harness.start_server(self.env, self.port, self.log_path, timeout=300, serve_args=())
        key_file = self.data_dir / "first-api-key"
        if not self.api_key:
            self.api_key = key_file.read_text().strip().rsplit("=", 1)[1]

    def wait_healthy(self, timeout: float) -> httpx.Response:
        """Poll ``/api/health`` until it answers 200 (a liveness bound, not a speed assertion)."""
        deadline = time.monotonic() + timeout
        last: object = None
        while time.monotonic() < deadline:
            try:
                r = httpx.get(f"{self.base_url}/api/health", timeout=10)
                if r.status_code == 200:
                    return r
                last = r.status_code
            except httpx.HTTPError as exc:
                last = exc
            time.sleep(0.5)
        raise AssertionError(f"not healthy within {timeout} s (last: {last}); log:\n{self.log_tail()}")

    def log_tail(self, chars: int = 4000) -> str:
        return self.log_path.read_text(errors="replace")[-chars:] if self.log_path.exists() else ""

    def stop(self) -> None:
        if self.proc is not None:
            stop_server(self.proc)
            self.proc = None


@contextlib.contextmanager
def embedded_server(prefix: str, **settings: str) -> Iterator[EmbeddedServer]:
    """A started :class:`EmbeddedServer` with ``settings`` (``ELEPHANTASM_*`` variables); afterwards
    every process of it is gone (a stopped postmaster is continued first) and its dir deleted."""
    data_dir = fresh_data_dir(prefix)
    server = EmbeddedServer(data_dir, embedded_env(data_dir, **settings))
    try:
        server.start()
        yield server
    finally:
        signal_all(postgres_processes(server.pgdata), signal.SIGCONT)
        server.stop()
        kill_leftovers(server.pgdata)
        shutil.rmtree(data_dir, ignore_errors=True)
