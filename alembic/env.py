"""Alembic environment: runs migrations over the async engine whose URL the caller passes in
``config.attributes['url']`` (or ``sqlalchemy.url``)."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlmodel import SQLModel

import elephantasm.db.models  # noqa: F401  (registers the tables on SQLModel.metadata)
from elephantasm.db.engine import create_engine

config = context.config
target_metadata = SQLModel.metadata


def _url() -> str:
    return config.attributes.get("url") or config.get_main_option("sqlalchemy.url")


def _run(connection) -> None:  # type: ignore[no-untyped-def]
    context.configure(connection=connection, target_metadata=target_metadata, compare_type=True)
    with context.begin_transaction():
        context.run_migrations()


async def _run_async() -> None:
    engine = create_engine(_url(), pooled=False)
    async with engine.connect() as connection:
        await connection.run_sync(_run)
    await engine.dispose()


def run_migrations_online() -> None:
    """Use the caller's connection when given one, else open our own."""
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
    else:
        asyncio.run(_run_async())


if context.is_offline_mode():
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    run_migrations_online()
