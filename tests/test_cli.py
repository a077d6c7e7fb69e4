"""The ``elephantasm`` command line, run as real subprocesses over the session's database.

Keys made by the CLI are checked against the in-process app (same database, same secret);
the first-``serve`` bootstrap runs on a fresh database of its own.
"""

from __future__ import annotations

import json
import re
import subprocess
import uuid
from pathlib import Path

import httpx
import pytest

from tests.conftest import TEST_SECRET
from tests.support.cli import run_cli
from tests.support.databases import create_database, drop_database
from tests.support.servers import free_port, server_env, start_server, stop_server

KEY_LINE = re.compile(r"^export ELEPHANTASM_API_KEY=(sk_live_\S+)$", re.MULTILINE)


@pytest.fixture
def cli(pg_url: str, data_dir: Path):  # type: ignore[no-untyped-def]
    """Run ``python -m elephantasm.cli.main ARGS`` against the test database."""

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return run_cli(pg_url, data_dir, *args)

    return run


def _ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    return result.stdout


def _org() -> str:
    return f"cli-{uuid.uuid4().hex[:10]}"


def _bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def test_keys_create_list_revoke(cli, client: httpx.AsyncClient) -> None:  # type: ignore[no-untyped-def]
    """A created key works; listings show only its prefix; a revoked key is a 401."""
    org = _org()
    out = _ok(cli("keys", "create", "--org", org, "--name", "ci"))
    keys = KEY_LINE.findall(out)
    assert len(keys) == 1, out
    key = keys[0]
    assert (await client.get("/api/animas", headers=_bearer(key))).status_code == 200

    listing = _ok(cli("keys", "list", "--org", org))
    prefix = key[:14]
    assert prefix in listing and org in listing
    assert key not in listing and key[14:] not in listing

    _ok(cli("keys", "revoke", prefix))
    r = await client.get("/api/animas", headers=_bearer(key))
    assert r.status_code == 401 and "detail" in r.json()
    assert "yes" in _ok(cli("keys", "list", "--org", org))

    # By id as well; an unknown key is an error naming it.
    key2 = KEY_LINE.findall(_ok(cli("keys", "create", "--org", org)))[0]
    listed = json.loads(_ok(cli("keys", "list", "--org", org, "--json")))
    key_id = next(k["id"] for k in listed if key2.startswith(k["prefix"]))
    _ok(cli("keys", "revoke", key_id))
    assert (await client.get("/api/animas", headers=_bearer(key2))).status_code == 401
    missing = cli("keys", "revoke", "sk_live_nothere")
    assert missing.returncode == 1 and "sk_live_nothere" in missing.stderr


def test_animas_create_and_list(cli) -> None:  # type: ignore[no-untyped-def]
    """``animas create`` prints the new id last; ``animas list`` shows it (and only this org's)."""
    org = _org()
    _ok(cli("keys", "create", "--org", org))  # the one command that makes an org
    out = _ok(cli("animas", "create", "Ada", "--org", org, "--description", "helper"))
    anima_id = out.strip().splitlines()[-1]
    uuid.UUID(anima_id)
    _ok(cli("animas", "create", "Bob", "--org", org))
    listing = _ok(cli("animas", "list", "--org", org))
    assert anima_id in listing and "Ada" in listing and "Bob" in listing
    other = _org()
    _ok(cli("keys", "create", "--org", other))
    assert anima_id not in _ok(cli("animas", "list", "--org", other))


def _write_jsonl(path: Path, lines: list[object]) -> Path:
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    return path


async def _event_count(client: httpx.AsyncClient, key: str, anima_id: str) -> int:
    r = await client.get("/api/events", params={"anima_id": anima_id, "limit": 1000}, headers=_bearer(key))
    assert r.status_code == 200, r.text
    return len(r.json()["items"])


async def test_events_import_is_idempotent_and_all_or_nothing(cli, client: httpx.AsyncClient, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """N lines import N events; re-importing lines with dedupe_key adds none; a bad line imports nothing."""
    org = _org()
    key = KEY_LINE.findall(_ok(cli("keys", "create", "--org", org)))[0]
    anima_id = _ok(cli("animas", "create", "importer", "--org", org)).strip().splitlines()[-1]
    n = 120
    lines = [
        {
            "event_type": "message.in" if i % 2 else "message.out",
            "content": f"line {i}",
            "session_id": "s1",
            "dedupe_key": f"k{i}",
            "occurred_at": f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}Z",
        }
        for i in range(n)
    ]
    good = _write_jsonl(tmp_path / "events.jsonl", lines)

    out = _ok(cli("events", "import", str(good), "--org", org, "--anima", anima_id, "--batch-size", "50"))
    assert f"{n} new" in out
    assert await _event_count(client, key, anima_id) == n

    out = _ok(cli("events", "import", str(good), "--org", org, "--anima", anima_id))
    assert "0 new" in out
    assert await _event_count(client, key, anima_id) == n

    other = _ok(cli("animas", "create", "clean", "--org", org)).strip().splitlines()[-1]
    bad_lines = [{"event_type": "message.in", "content": f"ok {i}"} for i in range(5)]
    bad_lines[2] = {"event_type": "message.sideways", "content": "bad type"}
    bad = _write_jsonl(tmp_path / "bad.jsonl", bad_lines)
    result = cli("events", "import", str(bad), "--org", org, "--anima", other)
    assert result.returncode == 1
    assert "line 3" in result.stderr + result.stdout
    assert await _event_count(client, key, other) == 0

    not_json = _write_jsonl(tmp_path / "broken.jsonl", [{"event_type": "system", "content": "fine"}, "{not json"])
    result = cli("events", "import", str(not_json), "--org", org, "--anima", other)
    assert result.returncode == 1 and "line 2" in result.stderr + result.stdout
    assert await _event_count(client, key, other) == 0


def test_status_prints_counts(cli) -> None:  # type: ignore[no-untyped-def]
    """``status`` names the database and counts the main tables."""
    org = _org()
    _ok(cli("keys", "create", "--org", org))
    _ok(cli("animas", "create", "counted", "--org", org))
    out = _ok(cli("status"))
    assert "PostgreSQL 18" in out
    for table in ("orgs", "api_keys", "animas", "events", "memories", "knowledge"):
        row = re.search(rf"\b{table}\b\s*│?\s*(\d+)", out)
        assert row, f"no count for {table}:\n{out}"
    assert int(re.search(r"\banimas\b\s*│?\s*(\d+)", out).group(1)) >= 1  # type: ignore[union-attr]


async def test_first_serve_bootstraps_one_key(pg_url: str, tmp_path: Path) -> None:
    """On an empty database, ``serve`` prints one working key; a restart prints none."""
    url = create_database(pg_url, "boot")
    env = server_env(url, TEST_SECRET, tmp_path)
    try:
        port = free_port()
        proc = start_server(env, port, tmp_path / "first.log")
        try:
            # stdout is a log file here, so the key goes to a 0600 file instead, never to the log.
            keys = KEY_LINE.findall((tmp_path / "first-api-key").read_text())
            assert len(keys) == 1 and keys[0] not in (tmp_path / "first.log").read_text()
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as c:
                r = await c.post("/api/animas", json={"name": "boot"}, headers=_bearer(keys[0]))
                assert r.status_code == 201, r.text
                assert (await c.get("/api/animas", headers=_bearer("sk_live_" + "y" * 40))).status_code == 401
        finally:
            stop_server(proc)

        proc = start_server(env, free_port(), tmp_path / "second.log")
        stop_server(proc)
        assert "ELEPHANTASM_API_KEY" not in (tmp_path / "second.log").read_text()
    finally:
        drop_database(url)
