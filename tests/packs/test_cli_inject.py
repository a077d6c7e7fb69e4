"""``elephantasm inject ANIMA``: prints the prompt and a per-layer token table."""

from __future__ import annotations

import subprocess
from pathlib import Path

import httpx

from tests.conftest import Tenant
from tests.packs.helpers import extract
from tests.support.cli import run_cli


def _cli(pg_url: str, data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(pg_url, data_dir, "inject", *args)


async def test_inject_prints_prompt_and_token_table(
    client: httpx.AsyncClient, tenant: Tenant, pg_url: str, data_dir: Path
) -> None:
    anima = (await client.post("/api/animas", json={"name": "cli-pack"}, headers=tenant.headers)).json()
    await extract(client, tenant, anima["id"], "Remember that the launch moved to Thursday.", session_id="s")
    result = _cli(pg_url, data_dir, "cli-pack", "--org", tenant.org_name, "--query", "launch", "--max-tokens", "500")
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "## Current session" in out and "user: Remember that the launch moved to Thursday." in out
    for label in ("identity", "knowledge", "long-term memories", "current session", "temporal context", "total"):
        assert label in out, label
    assert "/ 500 tokens" in out

    by_id = _cli(pg_url, data_dir, anima["id"], "--org", tenant.org_name)
    assert by_id.returncode == 0 and "launch moved to Thursday" in by_id.stdout


async def test_inject_reports_missing_and_empty_animas(
    client: httpx.AsyncClient, tenant: Tenant, pg_url: str, data_dir: Path
) -> None:
    await client.post("/api/animas", json={"name": "cli-empty"}, headers=tenant.headers)
    empty = _cli(pg_url, data_dir, "cli-empty", "--org", tenant.org_name)
    assert empty.returncode == 0 and "Nothing recorded" in empty.stdout
    missing = _cli(pg_url, data_dir, "nobody", "--org", tenant.org_name)
    assert missing.returncode == 1 and "not found" in missing.stderr
    bad = _cli(pg_url, data_dir, "cli-empty", "--org", tenant.org_name, "--max-tokens", "10")
    assert bad.returncode == 1 and "max_tokens" in bad.stderr
