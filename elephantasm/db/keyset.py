"""Keyset pagination over (timestamp, id): the one implementation every list endpoint uses.

A page is the rows after the cursor's (timestamp, id) in the given direction, ``limit`` of them,
plus the cursor of the last one when more follow. Stable under inserts, and index-friendly
(every paged query has an index ending in the timestamp and id it orders by).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from sqlalchemy import Select, and_, or_
from sqlalchemy.ext.asyncio import AsyncSession

from elephantasm.schemas.common import decode_cursor, encode_cursor


class Direction(StrEnum):
    """Which way a list runs."""

    ASC = "asc"
    """Oldest first."""
    DESC = "desc"
    """Newest first."""


async def keyset_page(
    session: AsyncSession,
    stmt: Select,
    *,
    at: Any,
    row_id: Any,
    limit: int,
    cursor: str | None,
    direction: Direction,
    at_name: str = "page_at",
    entities: bool = False,
) -> tuple[list[Any], str | None]:
    """Rows of ``stmt`` ordered by (``at``, ``row_id``) in ``direction``, after ``cursor``; plus the
    next page's cursor (None on the last page).

    ``at_name`` is the attribute of each returned row holding its ``at`` value (select the
    expression labelled ``page_at``, or name the column of an entity); ``entities`` returns the
    first column's objects (ORM entities) instead of rows.
    """
    ascending = direction is Direction.ASC
    if cursor:
        c_at, c_id = decode_cursor(cursor)
        after = (
            or_(at > c_at, and_(at == c_at, row_id > c_id))
            if ascending
            else or_(at < c_at, and_(at == c_at, row_id < c_id))
        )
        stmt = stmt.where(after)
    order = (at.asc(), row_id.asc()) if ascending else (at.desc(), row_id.desc())
    result = await session.execute(stmt.order_by(*order).limit(limit + 1))
    rows = list(result.scalars() if entities else result.all())
    if len(rows) <= limit:
        return rows, None
    last = rows[limit - 1]
    return rows[:limit], encode_cursor(getattr(last, at_name), last.id)
