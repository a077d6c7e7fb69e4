"""Candidate statements on the driver connection stay inside the compile's snapshot transaction."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import text

from elephantasm.db.driver_fetch import fetch
from elephantasm.db.errors import domain_errors
from elephantasm.domain.errors import ConflictError, ValidationError
from elephantasm.runtime import Runtime
from elephantasm.services.packs.reads import snapshot_transaction
from tests.conftest import Tenant
from tests.packs.conftest import FROZEN_NOW
from tests.packs.helpers import add_memory

_MEMORIES = text("SELECT id, summary FROM memories WHERE org_id = :org AND anima_id = :anima ORDER BY summary")
_SETTINGS = text(
    "SELECT current_setting('transaction_isolation') AS iso, current_setting('transaction_read_only') AS ro"
)


async def test_fetch_reads_the_snapshot_of_the_first_statement(
    pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    anima = uuid.UUID(panima["id"])
    await add_memory(pack_runtime, tenant, panima["id"], "before the snapshot", time_end=FROZEN_NOW)
    params = {"org": tenant.org_id, "anima": anima}
    async with snapshot_transaction(pack_runtime.engine) as conn:
        # fetch() is the first statement: it must open SQLAlchemy's transaction (REPEATABLE READ,
        # read only) on the driver before running, not run on its own.
        first = await fetch(conn, _MEMORIES, params)
        settings = (await fetch(conn, _SETTINGS, {}))[0]
        await add_memory(
            pack_runtime, tenant, panima["id"], "after the snapshot", time_end=FROZEN_NOW
        )  # another connection
        second = await fetch(conn, _MEMORIES, params)
    assert (settings["iso"], settings["ro"]) == ("repeatable read", "on")
    assert [r["summary"] for r in first] == [r["summary"] for r in second] == ["before the snapshot"]
    async with snapshot_transaction(pack_runtime.engine) as conn:
        now = await fetch(conn, _MEMORIES, params)
    assert [r["summary"] for r in now] == ["after the snapshot", "before the snapshot"]


async def test_fetch_binds_named_parameters_in_order(pack_runtime: Runtime) -> None:
    stmt = text(
        "SELECT CAST(:b AS int) - CAST(:a AS int) AS d, CAST(:a AS int) + CAST(:b AS int) AS s, CAST(:c AS text) AS c"
    )
    async with pack_runtime.engine.connect() as conn:
        row = (await fetch(conn, stmt, {"a": 2, "b": 10, "c": "x", "unused": 1}))[0]
    assert (row["d"], row["s"], row["c"]) == (8, 12, "x")


async def test_fetch_errors_map_to_the_same_4xx_as_through_sqlalchemy(pack_runtime: Runtime) -> None:
    """Data and integrity errors come out as SQLAlchemy's, so ``domain_errors`` maps them (422 / 409)."""
    name = f"dup-{uuid.uuid4()}"
    insert = text("INSERT INTO orgs (id, name) VALUES (:id, :name) RETURNING id")
    async with pack_runtime.engine.begin() as conn:
        await fetch(conn, insert, {"id": uuid.uuid4(), "name": name})
        with pytest.raises(ConflictError), domain_errors():
            await fetch(conn, insert, {"id": uuid.uuid4(), "name": name})  # unique name
        await conn.rollback()
    async with pack_runtime.engine.connect() as conn:
        with pytest.raises(ValidationError), domain_errors():
            await fetch(conn, text("SELECT 1 / CAST(:n AS int) AS q"), {"n": 0})  # division by zero: class 22
        with pytest.raises(ValidationError), domain_errors():
            await fetch(conn, text("SELECT CAST(:n AS int) AS q"), {"n": "not a number"})  # cannot be encoded


async def test_a_failed_statement_outside_a_transaction_leaves_the_connection_clean(pg_url: str) -> None:
    """The pool hands the same connection on: its next REPEATABLE READ transaction must start."""
    from elephantasm.db.engine import create_engine

    engine = create_engine(pg_url, pool_size=1, max_overflow=0)
    try:
        async with engine.connect() as conn:
            with pytest.raises(ValidationError), domain_errors():
                await fetch(conn, text("SELECT CAST(:n AS int) AS q"), {"n": "not a number"})
        async with engine.connect() as conn:
            conn = await conn.execution_options(isolation_level="REPEATABLE READ", postgresql_readonly=True)
            async with conn.begin():
                (row,) = await fetch(conn, _SETTINGS, {})
        assert (row["iso"], row["ro"]) == ("repeatable read", "on")
    finally:
        await engine.dispose()
