"""Newest-first keyset pagination and the read-side helpers shared by the dream read services."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import Select, and_, or_, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from elephantasm.db.models import Anima
from elephantasm.domain.errors import NotFoundError
from elephantasm.schemas.common import decode_cursor, encode_cursor


def readable_columns(table: Any) -> list[Any]:
    """Every column except the internals a client never sees (embedding, full-text vector)."""
    return [c for c in table.c if c.name not in ("embedding", "fts")]


async def page_desc(
    session: AsyncSession, stmt: Select, at: Any, row_id: Any, limit: int, cursor: str | None
) -> tuple[list[Any], str | None]:
    """Rows of ``stmt`` ordered by (``at``, ``row_id``) descending, after ``cursor``; plus the next cursor.

    ``stmt`` must also select ``at`` labelled ``page_at``.
    """
    if cursor:
        c_at, c_id = decode_cursor(cursor)
        stmt = stmt.where(or_(at < c_at, and_(at == c_at, row_id < c_id)))
    rows = list((await session.execute(stmt.order_by(at.desc(), row_id.desc()).limit(limit + 1))).all())
    next_cursor = None
    if len(rows) > limit:
        last = rows[limit - 1]
        next_cursor = encode_cursor(last.page_at, last.id)
    return rows[:limit], next_cursor


async def check_anima(session: AsyncSession, org_id: uuid.UUID, anima_id: uuid.UUID) -> None:
    """NotFoundError unless the anima is a live one of the org (another org's is a 404, never [])."""
    found = (
        await session.execute(
            select(Anima.id).where(Anima.id == anima_id, Anima.org_id == org_id, Anima.deleted_at.is_(None))
        )
    ).scalar_one_or_none()
    if found is None:
        raise NotFoundError(f"anima {anima_id} not found")


def live_anima(anima_col: Any) -> Any:
    """A filter: the row's anima is not deleted."""
    return anima_col.in_(select(Anima.id).where(Anima.deleted_at.is_(None)).scalar_subquery())


async def enable_filtered_vector_scan(session: AsyncSession) -> None:
    """pgvector >= 0.8: keep scanning the HNSW graph until LIMIT rows pass the query's filters."""
    await session.execute(text("SET LOCAL hnsw.iterative_scan = relaxed_order"))
