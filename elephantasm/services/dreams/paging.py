"""Read-side helpers shared by the dream read services."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from elephantasm.db.models import Anima
from elephantasm.db.scopes import live_anima_row, org_scoped
from elephantasm.domain.errors import NotFoundError


def readable_columns(table: Any) -> list[Any]:
    """Every column except the internals a client never sees (embedding, full-text vector, whether
    the row is in the HNSW index)."""
    return [c for c in table.c if c.name not in ("embedding", "fts", "vector_indexed")]


async def check_anima(session: AsyncSession, org_id: uuid.UUID, anima_id: uuid.UUID) -> None:
    """NotFoundError unless the anima is a live one of the org (another org's is a 404, never [])."""
    await check_anima_vectors(session, org_id, anima_id)


async def check_anima_vectors(session: AsyncSession, org_id: uuid.UUID, anima_id: uuid.UUID) -> bool:
    """:func:`check_anima`, returning the anima's ``vectors_indexed``: whether its memories are in the
    HNSW index (else a vector search of them scans its rows exactly; migration 0019)."""
    found = (
        await session.execute(
            select(col(Anima.vectors_indexed)).where(
                col(Anima.id) == anima_id, org_scoped(Anima, org_id), live_anima_row()
            )
        )
    ).scalar_one_or_none()
    if found is None:
        raise NotFoundError(f"anima {anima_id} not found")
    return bool(found)


async def enable_filtered_vector_scan(session: AsyncSession) -> None:
    """pgvector >= 0.8: keep scanning the HNSW graph until LIMIT rows pass the query's filters."""
    await session.execute(text("SET LOCAL hnsw.iterative_scan = relaxed_order"))
