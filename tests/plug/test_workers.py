"""``serve --workers 2``: both processes answer, exactly one runs the dreamer scheduler, and the
metrics of both add up on ``/metrics``."""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from api.worker import worker_background
from benchmarks import harness
from dreamer.leader import lock_key
from elephantasm.cli.workers import worker_env
from elephantasm.settings import Settings
from tests.conftest import TEST_SECRET
from tests.support.databases import connect, create_database, drop_database
from tests.support.servers import free_port, server_env, stop_server


def health_total(metrics_text: str) -> float:
    for family in text_string_to_metric_families(metrics_text):
        for s in family.samples:
            if s.name == "elephantasm_http_requests_total" and s.labels.get("route") == "/api/health":
                return s.value
    return 0.0


async def scheduler_locks(pg_url: str, key: int) -> int:
    """Granted advisory locks on ``key`` (a bigint key is split into classid/objid, objsubid 1)."""
    conn = await connect(pg_url)
    try:
        return await conn.fetchval(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1 "
            "AND classid::bigint = (($1::bigint >> 32) & 4294967295) AND objid::bigint = ($1::bigint & 4294967295)",
            key,
        )
    finally:
        await conn.close()


async def test_two_workers_serve_and_elect_one_scheduler(pg_url: str, data_dir: Path, tmp_path: Path) -> None:
    """On a fresh database (the parent migrates it once), so its log speaks only of this deployment."""
    url = await asyncio.to_thread(create_database, pg_url, "workers")
    try:
        await _two_workers(url, data_dir, tmp_path / "workers.log")
    finally:
        await asyncio.to_thread(drop_database, url)


async def _two_workers(pg_url: str, data_dir: Path, log_path: Path) -> None:
    group, port = uuid.uuid4().hex, free_port()
    env = server_env(
        pg_url,
        TEST_SECRET,
        data_dir,
        ELEPHANTASM_DREAMER_ENABLED="true",
        ELEPHANTASM_WORKER_GROUP=group,
        ELEPHANTASM_DREAMER_POLL_SECONDS="1",
    )
    proc = await asyncio.to_thread(harness.start_server, env, port, log_path, 180, ("--workers", "2"))
    try:
        pids: set[int] = set()
        sent = 0
        deadline = time.monotonic() + 120
        while len(pids) < 2 and time.monotonic() < deadline:
            async with httpx.AsyncClient() as http:  # a new connection each time: the kernel spreads them
                r = await http.get(f"http://127.0.0.1:{port}/api/health")
            sent += 1
            if r.status_code == 200:
                pids.add(r.json()["pid"])
            else:
                await asyncio.sleep(0.2)  # the second worker may still be starting
        assert len(pids) == 2, f"only {pids} answered {sent} requests"
        assert proc.pid not in pids  # the parent supervises; workers serve

        async with httpx.AsyncClient() as http:
            text = (await http.get(f"http://127.0.0.1:{port}/metrics")).text
        assert health_total(text) >= sent  # both workers' counters, summed (+ the start-up probes)

        deadline = time.monotonic() + 30
        while await scheduler_locks(pg_url, lock_key(group)) != 1 and time.monotonic() < deadline:
            await asyncio.sleep(0.5)
        assert await scheduler_locks(pg_url, lock_key(group)) == 1
    finally:
        stop_server(proc)
    log = log_path.read_text()
    assert log.count("dreamer scheduler started") == 1, log
    assert "Traceback" not in log and "WARNING" not in log, log


def test_no_dreamer_means_no_scheduler_in_any_worker(settings: Settings) -> None:
    """``--no-dreamer``: the workers get no group and the dreamer off, so none contends for the lock."""
    env = worker_env(settings, "postgresql+asyncpg://db", with_dreamer=False, metrics_dir="/tmp/m")
    assert env["ELEPHANTASM_DREAMER_ENABLED"] == "false" and "ELEPHANTASM_WORKER_GROUP" not in env
    worker_settings = Settings(**{**settings.model_dump(), "dreamer_enabled": False, "worker_group": None})
    assert worker_background(worker_settings) == []
    with_dreamer = worker_env(settings.model_copy(update={"worker_group": "g1"}), "url", True, "/tmp/m")
    assert with_dreamer["ELEPHANTASM_WORKER_GROUP"] == "g1" and with_dreamer["PROMETHEUS_MULTIPROC_DIR"] == "/tmp/m"
    assert len(worker_background(settings.model_copy(update={"dreamer_enabled": True, "worker_group": "g1"}))) == 1
