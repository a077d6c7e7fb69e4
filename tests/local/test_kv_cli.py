"""``elephantasm kv …`` as real subprocesses over the session's database (``verify`` is the
service the API's verify route tests; each command here loads the model once)."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.conftest import Tenant
from tests.local.conftest import seed_anima
from tests.support.cli import run_cli


def _kv(pg_url: str, data_dir: Path, org: str, *args: str) -> str:
    out = run_cli(pg_url, data_dir, "kv", *args, "--org", org, timeout=300)
    assert out.returncode == 0, f"exit {out.returncode}\n{out.stdout}\n{out.stderr}"
    return out.stdout


async def test_build_export_import_prune(
    client: httpx.AsyncClient, tenant: Tenant, anima: dict, pg_url: str, data_dir: Path, tmp_path: Path
) -> None:
    await seed_anima(client, tenant.headers, anima["id"], n=8)
    org = tenant.org_name
    built = _kv(pg_url, data_dir, org, "build", anima["id"])
    assert built.startswith("miss: snapshot ")
    snapshot_id = built.split()[2]

    package = tmp_path / "memory.ekvpkg"
    exported = _kv(pg_url, data_dir, org, "export", snapshot_id, str(package), "--probes", "1")
    assert "greedy_identical │ True" in exported and package.stat().st_size > 1_000_000

    other = (await client.post("/api/animas", json={"name": "heir"}, headers=tenant.headers)).json()
    assert "imported snapshot" in _kv(pg_url, data_dir, org, "import", str(package), "--anima", other["id"])
    r = await client.get("/api/kv-snapshots", params={"anima_id": other["id"]}, headers=tenant.headers)
    assert [s["source"] for s in r.json()] == ["imported"]
    assert "removed 0 snapshots of deleted animas; evicted 0" in _kv(pg_url, data_dir, org, "prune")
