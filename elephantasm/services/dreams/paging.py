"""Read-side helpers shared by the dream read services."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from elephantasm.db.models import Anima
from elephantasm.services.animas import live_anima_value


def readable_columns(table: Any) -> list[Any]:
    """Every column except the internals a client never sees (embedding, full-text vector, whether
    the row is in the HNSW index)."""
    return [c for c in table.c if c.name not in ("embedding", "fts", "vector_indexed")]


async def check_anima(session: AsyncSession, org_id: uuid.UUID, anima_id: uuid.UUID) -> None:
    """NotFoundError unless the anima is a live one of the org (another org's is a 404, never [])."""
    await check_anima_vectors(session, org_id, anima_id)


async def check_anima_vectors(session: AsyncSession, org_id: uuid.UUID, anima_id: uuid.UUID) -> bool:
    """:func:`check_anima`, returning the anima's ``vectors_indexed``: whether its memories and
    knowledge are in the HNSW index, else a vector search of them scans its rows exactly."""
    return bool(await live_anima_value(session, org_id, anima_id, col(Anima.vectors_indexed)))


async def enable_filtered_vector_scan(session: AsyncSession) -> None:
    """pgvector >= 0.8: keep scanning the HNSW graph until LIMIT rows pass the query's filters."""
    await session.execute(text("SET LOCAL hnsw.iterative_scan = relaxed_order"))
