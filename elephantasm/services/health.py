"""What ``/api/health`` asks the database: a round trip (the admin check asks ``services/keys.py``)."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

_PING = text("SELECT 1")


async def ping_database(engine: AsyncEngine) -> None:
    """One round trip on a pooled connection; raises whatever the driver raises when it cannot."""
    async with engine.connect() as conn:
        await conn.execute(_PING)
