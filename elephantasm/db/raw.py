"""A pooled connection's asyncpg connection, for hot statements that need no transaction: one round
trip (autocommit, kept prepared by asyncpg) instead of SQLAlchemy's ``BEGIN``, statement, ``ROLLBACK``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine


@asynccontextmanager
async def driver_connection(engine: AsyncEngine) -> AsyncIterator[Any]:
    """Yield the asyncpg connection of a pooled connection, outside any transaction.

    A connection the driver reports closed after an error (database restart) is invalidated, so
    the pool does not hand it out again; SQLAlchemy only learns that from its own statements.
    """
    async with engine.connect() as conn:
        driver = (await conn.get_raw_connection()).driver_connection
        # An open (just checked-out) pool connection always has its driver connection.
        assert driver is not None
        try:
            yield driver
        except BaseException:
            if driver.is_closed():
                await conn.invalidate()
            raise
