"""What ``/api/health`` asks the database: a round trip, and the org an admin key belongs to."""

from __future__ import annotations

import uuid

from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession
from sqlmodel import col

from elephantasm.db.models import Org

_PING = text("SELECT 1")


async def ping_database(engine: AsyncEngine) -> None:
    """One round trip on a pooled connection; raises whatever the driver raises when it cannot."""
    async with engine.connect() as conn:
        await conn.execute(_PING)


async def org_name(session: AsyncSession, org_id: uuid.UUID) -> str | None:
    """The org's name, or None if there is no such org."""
    stmt = select(col(Org.name)).where(col(Org.id) == org_id)
    return (await session.execute(stmt)).scalar_one_or_none()
