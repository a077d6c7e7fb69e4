"""Real processes for benchmarks: a fresh embedded Postgres in a temp dir, migrated, one tenant key,
and the API as an ``elephantasm serve`` subprocess on loopback; plus the load process and CPU
accounting for all three (API, Postgres, load generator).

Benchmarks never import ``tests``; the tests reuse the process handling here.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

import httpx
import psutil

from benchmarks.loadgen import Phase, PhaseResult

REPO_ROOT = Path(__file__).resolve().parents[1]
SECRET = "benchmark-secret-not-for-production"


def free_port() -> int:
    """A free TCP port on loopback."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_env(database_url: str, data_dir: Path, **extra: str) -> dict[str, str]:
    """Environment for an API subprocess: external database URL, fixed secret, no dreamer."""
    env = dict(os.environ)
    env.update(
        ELEPHANTASM_DATABASE_URL=database_url,
        ELEPHANTASM_SECRET_KEY=SECRET,
        ELEPHANTASM_DATA_DIR=str(data_dir),
        ELEPHANTASM_DREAMER_ENABLED="false",
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


def start_server(
    env: dict[str, str],
    port: int,
    log_path: Path,
    timeout: float = 60,
    serve_args: tuple[str, ...] = ("--no-dreamer",),
    preexec_fn: Callable[[], None] | None = None,
) -> subprocess.Popen:
    """Run ``elephantasm serve`` on loopback and wait until ``/api/health`` answers.

    Also used by the tests (``tests/support/servers.py``), which pass ``serve_args=()`` so the
    dreamer setting comes from the environment, and ``preexec_fn`` to set the process's limits.
    """
    log = open(log_path, "ab")  # noqa: SIM115 - the process owns it until it exits
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "elephantasm.cli.main",
            "serve",
            *serve_args,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        env=env,
        cwd=REPO_ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        preexec_fn=preexec_fn,
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}:\n{log_path.read_text()[-3000:]}")
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


def run_load(phase: Phase) -> PhaseResult:
    """Run one phase in a separate load-generator process."""
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.loadgen"],
        input=json.dumps(asdict(phase)),
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"load generator failed:\n{proc.stderr[-3000:]}")
    return PhaseResult(**json.loads(proc.stdout))


def _tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) of a process, its live children and its reaped children.

    Counting reaped children keeps the total monotonic when Postgres backends come and go
    (the pool closes overflow connections).
    """
    try:
        root = psutil.Process(pid)
        t = root.cpu_times()
        total = t.user + t.system + t.children_user + t.children_system
        for child in root.children(recursive=True):
            try:
                c = child.cpu_times()
                total += c.user + c.system
            except psutil.NoSuchProcess:
                pass  # exited between listing and reading: counted once reaped
        return total
    except psutil.NoSuchProcess:
        return 0.0


def machine_busy_seconds() -> float:
    """CPU seconds the whole machine has spent busy (all cores, everything but idle and iowait)."""
    t = psutil.cpu_times()
    return sum(t) - t.idle - getattr(t, "iowait", 0.0)


@dataclass
class CpuSample:
    """CPU seconds of the API process, the Postgres cluster and the whole machine at one instant."""

    api: float
    postgres: float
    machine: float


@dataclass
class Deployment:
    """A running benchmark deployment."""

    base_url: str
    host: str
    port: int
    api_key: str
    org_id: str
    database_url: str
    server: subprocess.Popen
    postmaster_pid: int
    pg_version: str
    work_dir: Path

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"}

    def cpu(self) -> CpuSample:
        """Sample CPU used so far by the API, by Postgres (postmaster and backends) and by the machine."""
        return CpuSample(_tree_cpu(self.server.pid), _tree_cpu(self.postmaster_pid), machine_busy_seconds())


async def _prepare(database_url: str, data_dir: Path) -> tuple[str, str, str]:
    """Create the benchmark tenant's key directly through the service; returns (key, org id, version)."""
    from sqlalchemy import text

    from elephantasm.runtime import build_runtime
    from elephantasm.services.keys import create_key
    from elephantasm.settings import Settings

    settings = Settings(database_url=database_url, data_dir=data_dir, secret_key=SECRET, dreamer_enabled=False)
    rt = build_runtime(settings, database_url=database_url)
    try:
        async with rt.unit_of_work() as session:
            # The bootstrap org's name: its keys count as admin keys (``/api/health`` details).
            issued = await create_key(session, rt.secret, "local", name="benchmark")
            version = (await session.execute(text("SHOW server_version"))).scalar_one()
    finally:
        await rt.close()
    return issued.key, str(issued.org_id), str(version)


@contextmanager
def migrated_database(prefix: str) -> Iterator[tuple[str, Path]]:
    """A fresh embedded Postgres in a temp dir, migrated; yields (URL, dir); deleted afterwards."""
    from elephantasm.db.embedded import PG_MAJOR, import_pgserver, start_embedded_postgres
    from elephantasm.db.migrate import upgrade

    work = Path(tempfile.mkdtemp(prefix=prefix))
    work.chmod(0o755)
    try:
        url = start_embedded_postgres(work, cleanup_mode="delete")
        upgrade(url)
        yield url, work
    finally:
        with contextlib.suppress(Exception):  # already stopped, or never started
            import_pgserver().get_server(work / f"pg{PG_MAJOR}", cleanup_mode="delete").cleanup()
        shutil.rmtree(work, ignore_errors=True)


@contextmanager
def deployment(workers: int = 1, **server_settings: str) -> Iterator[Deployment]:
    """A fresh Postgres (temp dir, deleted afterwards), migrated, one key, the API (``workers`` processes).

    ``server_settings`` are extra ``ELEPHANTASM_*`` environment variables for the API process(es).
    """
    from elephantasm.db.embedded import PG_MAJOR, import_pgserver, start_embedded_postgres
    from elephantasm.db.migrate import upgrade

    work = Path(tempfile.mkdtemp(prefix="elephantasm-bench-"))
    work.chmod(0o755)
    server = None
    try:
        url = start_embedded_postgres(work, cleanup_mode="delete")
        upgrade(url)
        key, org_id, version = asyncio.run(_prepare(url, work))
        pgdata = work / f"pg{PG_MAJOR}"
        postmaster_pid = int((pgdata / "postmaster.pid").read_text().split()[0])
        port = free_port()
        serve_args = ("--no-dreamer", "--workers", str(workers)) if workers > 1 else ("--no-dreamer",)
        server = start_server(
            server_env(url, work, **server_settings),
            port,
            work / "server.log",
            timeout=60 * workers,
            serve_args=serve_args,
        )
        yield Deployment(
            base_url=f"http://127.0.0.1:{port}",
            host="127.0.0.1",
            port=port,
            api_key=key,
            org_id=org_id,
            database_url=url,
            server=server,
            postmaster_pid=postmaster_pid,
            pg_version=version,
            work_dir=work,
        )
    finally:
        if server is not None:
            stop_server(server)
        with contextlib.suppress(Exception):  # already stopped, or never started
            import_pgserver().get_server(work / f"pg{PG_MAJOR}", cleanup_mode="delete").cleanup()
        shutil.rmtree(work, ignore_errors=True)
