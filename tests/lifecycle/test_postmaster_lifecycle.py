"""Every way a CLI process ends stops the embedded Postgres it started (issue 29, item 1).

``serve``, ``dreamer``, a one-shot command (``animas export``, held mid-export by a full stdout pipe)
and ``mcp`` are ended by SIGTERM, SIGINT and SIGHUP, and ``serve`` by an error at startup (its port
taken). Afterwards no postmaster of the data dir runs and pgserver's list of the server's users
names no dead process (a dead one there would keep the server running for ever). One data dir
serves every case: the cases run one after another, each starting the server again.
"""

from __future__ import annotations

import json
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil
import pytest

from benchmarks.harness import REPO_ROOT
from tests.faults.helpers import EmbeddedServer, embedded_env, fresh_data_dir, kill_leftovers, pgdata_of, postmasters
from tests.support.servers import free_port

SIGNALS = [signal.SIGTERM, signal.SIGINT, signal.SIGHUP]
READY_WITHIN = 180.0  # seconds: a liveness bound for a busy machine, not a speed assertion
MCP_INITIALIZE = (
    json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"},
            },
        }
    )
    + "\n"
).encode()


@dataclass
class Setup:
    data_dir: Path
    anima_id: str

    @property
    def pgdata(self) -> Path:
        return pgdata_of(self.data_dir)


@pytest.fixture(scope="module")
def setup() -> Iterator[Setup]:
    """A data dir whose database holds an anima with an export larger than a pipe's buffer."""
    data_dir = fresh_data_dir("elephantasm-lifecycle-")
    server = EmbeddedServer(data_dir, embedded_env(data_dir))
    try:
        server.start()
        h = server.headers
        anima = httpx.post(f"{server.base_url}/api/animas", json={"name": "big"}, headers=h, timeout=60).json()
        events = [
            {"anima_id": anima["id"], "event_type": "message.in", "content": f"line {i}: " + "lorem ipsum " * 20}
            for i in range(600)
        ]
        r = httpx.post(f"{server.base_url}/api/events/batch", json={"events": events}, headers=h, timeout=60)
        assert r.status_code in (200, 201), r.text
        server.stop()
        yield Setup(data_dir, anima["id"])
    finally:
        server.stop()
        kill_leftovers(pgdata_of(data_dir))


def _cli(
    setup: Setup, *args: str, log: Path, stdout: int | None = None, stdin: int = subprocess.DEVNULL
) -> subprocess.Popen:
    env = embedded_env(setup.data_dir, ELEPHANTASM_ENDPOINT="http://127.0.0.1:9", ELEPHANTASM_API_KEY="sk_none")
    out = open(log, "ab")  # noqa: SIM115 - the process owns it until it exits
    return subprocess.Popen(
        [sys.executable, "-m", "elephantasm.cli.main", *args],
        env=env,
        cwd=REPO_ROOT,
        stdin=stdin,
        stdout=out if stdout is None else stdout,
        stderr=out,
    )


def _wait(predicate: object, proc: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + READY_WITHIN
    while not predicate():  # type: ignore[operator]
        assert proc.poll() is None, f"exited early ({proc.returncode}):\n{log.read_text()[-3000:]}"
        assert time.monotonic() < deadline, f"not ready:\n{log.read_text()[-3000:]}"
        time.sleep(0.2)


def _healthy(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def _assert_nothing_left(setup: Setup, proc: subprocess.Popen, log: Path) -> None:
    try:
        proc.wait(READY_WITHIN)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError(f"did not exit:\n{log.read_text()[-3000:]}") from None
    # A postmaster told to stop removes its pid file just before it exits: give it that moment.
    _, survivors = psutil.wait_procs(postmasters(setup.pgdata), timeout=15)
    kill_leftovers(setup.pgdata)  # so one failing case does not fail the next ones
    assert survivors == [], f"postmaster survived:\n{log.read_text()[-3000:]}"
    users = json.loads((setup.pgdata / ".handle_pids.json").read_text() or "[]")
    assert [pid for pid in users if psutil.pid_exists(pid)] == users, users


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_serve(setup: Setup, sig: int, tmp_path: Path) -> None:
    port, log = free_port(), tmp_path / "serve.log"
    proc = _cli(setup, "serve", "--host", "127.0.0.1", "--port", str(port), log=log)
    _wait(lambda: _healthy(port), proc, log)
    proc.send_signal(sig)
    _assert_nothing_left(setup, proc, log)


def test_serve_failing_at_startup(setup: Setup, tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = _cli(setup, "serve", "--host", "127.0.0.1", "--port", str(port), log=log)
        _assert_nothing_left(setup, proc, log)
    assert proc.returncode != 0


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_dreamer(setup: Setup, sig: int, tmp_path: Path) -> None:
    log = tmp_path / "dreamer.log"
    proc = _cli(setup, "dreamer", log=log)
    _wait(lambda: "Dreamer running" in log.read_text(), proc, log)
    proc.send_signal(sig)
    _assert_nothing_left(setup, proc, log)


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_one_shot_command(setup: Setup, sig: int, tmp_path: Path) -> None:
    log = tmp_path / "export.log"
    proc = _cli(setup, "animas", "export", setup.anima_id, log=log, stdout=subprocess.PIPE)
    assert proc.stdout is not None
    # Nobody reads the pipe: the export blocks mid-way, with the server started.
    _wait(lambda: bool(select.select([proc.stdout], [], [], 0)[0]), proc, log)
    proc.send_signal(sig)
    proc.communicate(timeout=READY_WITHIN)  # drains the pipe so the process can finish exiting
    _assert_nothing_left(setup, proc, log)


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_mcp(setup: Setup, sig: int, tmp_path: Path) -> None:
    log = tmp_path / "mcp.log"
    proc = _cli(setup, "mcp", log=log, stdin=subprocess.PIPE)
    assert proc.stdin is not None
    # Ready once it has answered MCP's handshake (stdout goes to the log); then it waits on stdin
    # again. It starts no Postgres of its own.
    proc.stdin.write(MCP_INITIALIZE)
    proc.stdin.flush()
    _wait(lambda: '"id":1,"result"' in log.read_text(), proc, log)
    proc.send_signal(sig)
    _assert_nothing_left(setup, proc, log)
