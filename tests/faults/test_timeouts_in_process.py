"""The database limits, in process: a statement over its limit is a 503 with ``Retry-After`` (the
database is too slow right now; a retry can succeed), and dead users leave pgserver's list."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from api.app import create_app
from elephantasm.db.embedded import drop_dead_users
from elephantasm.db.engine import create_sessionmaker
from elephantasm.db.errors import is_unavailable
from elephantasm.runtime import Runtime, build_engine
from tests.conftest import Tenant


async def test_a_statement_over_its_timeout_is_unavailable(runtime: Runtime) -> None:
    with pytest.raises(DBAPIError) as caught:
        async with runtime.unit_of_work() as session:
            await session.execute(text("SET LOCAL statement_timeout = 50"))
            await session.execute(text("SELECT pg_sleep(2)"))
    assert is_unavailable(caught.value)


async def test_an_api_request_over_the_statement_limit_answers_503(runtime: Runtime, tenant: Tenant) -> None:
    settings = runtime.settings.model_copy(update={"db_statement_timeout_seconds": 0.001})
    engine = build_engine(settings, runtime.database_url)
    slow = dataclasses.replace(runtime, settings=settings, engine=engine, sessionmaker=create_sessionmaker(engine))
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(slow)), base_url="http://t") as c:
            # A 1 ms limit: the first statement of any request is cancelled by Postgres.
            r = await c.get("/api/animas", headers=tenant.headers)
    finally:
        await engine.dispose()
    assert r.status_code == 503, r.text
    assert int(r.headers["Retry-After"]) > 0 and r.json()["detail"]


def test_dead_processes_leave_the_list_of_users(tmp_path: Path) -> None:
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = int(gone.stdout)
    handles = tmp_path / ".handle_pids.json"
    handles.write_text(json.dumps([dead, os.getpid()]))
    drop_dead_users(tmp_path)
    assert json.loads(handles.read_text()) == [os.getpid()]
