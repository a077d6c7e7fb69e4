"""Shared fixtures: one real embedded Postgres per test session, the app over it, tenants.

Every test gets fresh orgs (tenants), so tests never need to clean up after each other.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from elephantasm.db.embedded import start_embedded_postgres
from elephantasm.db.migrate import upgrade
from elephantasm.runtime import Runtime, build_runtime
from elephantasm.services.keys import create_key
from elephantasm.settings import Settings
from tests.support.servers import free_port, server_env, start_server, stop_server

pytest_plugins = ["tests.support.fixtures"]  # the loopback OpenAI-compatible server (openai_server)

TEST_SECRET = "test-secret-not-for-production"


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one worker more than the cores (at most 4). Many tests wait on a server or CLI process
    they started, so a worker per core alone leaves the cores idle for part of the run."""
    return min(4, len(os.sched_getaffinity(0)) + 1)


@pytest.fixture(scope="session")
def data_dir() -> Iterator[Path]:
    """A throwaway data dir the embedded Postgres user can reach (under the system temp dir)."""
    path = Path(tempfile.mkdtemp(prefix="elephantasm-test-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_url(data_dir: Path) -> str:
    """A real PostgreSQL 18 + pgvector, migrated to head; deleted at the end of the session."""
    url = start_embedded_postgres(data_dir, cleanup_mode="delete")
    upgrade(url)
    return url


@pytest.fixture(scope="session")
def settings(data_dir: Path, pg_url: str) -> Settings:
    """Settings for in-process tests: no auth cache (revocation is immediate), no dreamer."""
    return Settings(
        database_url=pg_url,
        data_dir=data_dir,
        secret_key=TEST_SECRET,
        auth_cache_seconds=0,
        dreamer_enabled=False,
        # Every in-process request comes from one address: the whole suite must not trip the
        # failed-auth limit (tests/hardening/test_ops.py checks it on an app of its own).
        auth_failure_limit=1_000_000,
        # A busy test machine must not turn a slow statement into a 503 (tests/faults sets its own).
        db_statement_timeout_seconds=120,
    )


@pytest.fixture(scope="session")
async def runtime(settings: Settings, pg_url: str) -> AsyncIterator[Runtime]:
    """The composition root over the test database."""
    rt = build_runtime(settings, database_url=pg_url)
    yield rt
    await rt.close()


@pytest.fixture(scope="session")
def app(runtime: Runtime):  # type: ignore[no-untyped-def]
    """The Litestar app (no background dreamer)."""
    from api.app import create_app

    return create_app(runtime)


@pytest.fixture(scope="session")
async def client(app) -> AsyncIterator[httpx.AsyncClient]:  # type: ignore[no-untyped-def]
    """An HTTP client driving the app in the test's own event loop (see docs/design.md §12)."""
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
        yield c


@pytest.fixture
async def browser_like(app) -> AsyncIterator[httpx.AsyncClient]:  # type: ignore[no-untyped-def]
    """A client with its own cookie jar, for the inspector (the shared ``client`` must never hold a
    UI session)."""
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
        yield c


@dataclass(frozen=True)
class Tenant:
    """A fresh org with one API key."""

    org_id: uuid.UUID
    org_name: str
    api_key: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"}


async def make_tenant(runtime: Runtime, prefix: str = "org") -> Tenant:
    """Create an org and a key directly through the service."""
    name = f"{prefix}-{uuid.uuid4().hex[:10]}"
    async with runtime.unit_of_work() as session:
        issued = await create_key(session, runtime.secret, name)
    return Tenant(issued.org_id, name, issued.key)


@pytest.fixture
async def tenant(runtime: Runtime) -> Tenant:
    """A fresh tenant for this test."""
    return await make_tenant(runtime, "tenant")


@pytest.fixture
async def other_tenant(runtime: Runtime) -> Tenant:
    """A second, unrelated tenant for isolation checks."""
    return await make_tenant(runtime, "other")


@pytest.fixture
async def anima(client: httpx.AsyncClient, tenant: Tenant) -> dict:
    """An anima of ``tenant``."""
    r = await client.post("/api/animas", json={"name": "test-anima"}, headers=tenant.headers)
    assert r.status_code == 201, r.text
    return r.json()


@pytest.fixture(scope="session")
def live_server(pg_url: str, data_dir: Path) -> Iterator[str]:
    """A real ``elephantasm serve`` process on loopback over the test database; yields its base URL."""
    port = free_port()
    proc = start_server(server_env(pg_url, TEST_SECRET, data_dir), port, data_dir / "live-server.log")
    yield f"http://127.0.0.1:{port}"
    stop_server(proc)
