"""Throwaway databases on the session's Postgres server, for tests that need an empty schema
(migrations from nothing, the first-``serve`` bootstrap), and runtimes over such a database for tests
whose code looks at every anima (the exact-vector flips, the dreamer's scheduler)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any

import asyncpg
from sqlalchemy.engine import make_url

from elephantasm.cli.context import cli_runtime
from elephantasm.runtime import Runtime
from elephantasm.settings import Settings


def with_database(url: str, name: str) -> str:
    """``url`` with its database name swapped for ``name`` (driver, user and socket host kept)."""
    return make_url(url).set(database=name).render_as_string(hide_password=False)


def _connect_args(url: str) -> dict[str, Any]:
    u = make_url(url)
    args: dict[str, Any] = {"user": u.username, "database": u.database}
    if u.password:
        args["password"] = u.password
    host = u.query.get("host") or u.host
    if host:
        args["host"] = host
    if u.port:
        args["port"] = u.port
    return args


def _run(coro_factory) -> Any:  # type: ignore[no-untyped-def]
    # A thread of its own, so this works whether or not the caller's thread runs an event loop.
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(coro_factory())).result()


async def connect(url: str) -> asyncpg.Connection:
    """A plain asyncpg connection to the database ``url`` names (the caller closes it)."""
    return await asyncpg.connect(**_connect_args(url))


async def fetch_value(url: str, sql: str) -> object:
    """The first column of the first row of ``sql`` on the database ``url`` names (own connection)."""
    conn = await connect(url)
    try:
        return await conn.fetchval(sql)
    finally:
        await conn.close()


async def _admin(url: str, sql: str) -> None:
    conn = await connect(with_database(url, "postgres"))
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


def create_database(url: str, prefix: str = "tmp") -> str:
    """Create an empty database ``<prefix>_<hex>`` next to ``url``'s and return its URL."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    _run(lambda: _admin(url, f'CREATE DATABASE "{name}"'))
    return with_database(url, name)


def drop_database(url: str) -> None:
    """Drop the database ``url`` names, disconnecting anyone still attached."""
    name = make_url(url).database
    _run(lambda: _admin(url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@asynccontextmanager
async def own_runtime(pg_url: str, settings: Settings, prefix: str) -> AsyncIterator[Runtime]:
    """A runtime on a freshly migrated database of its own (dropped afterwards): the CLI's runtime
    (:func:`elephantasm.cli.context.cli_runtime`: migrate, build, close) over a new database."""
    url = create_database(pg_url, prefix)
    try:
        async with cli_runtime(settings.model_copy(update={"database_url": url})) as runtime:
            yield runtime
    finally:
        drop_database(url)
