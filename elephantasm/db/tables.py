"""Typed access to what SQLModel and SQLAlchemy's async stubs leave untyped (``__table__``, which
SQLModel sets but does not declare; a DML result's ``rowcount``), in one cast each."""

from __future__ import annotations

from typing import Any, TypeVar, cast

from sqlalchemy import CursorResult, Result, Table
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import SQLModel

RowT = TypeVar("RowT", bound=SQLModel)


def table_of(model: type[SQLModel]) -> Table:
    """The Core :class:`Table` behind a SQLModel ``table=True`` class."""
    return cast(Table, model.__table__)  # type: ignore[attr-defined]  # set by SQLModel's metaclass, undeclared


def rowcount(result: Result[Any]) -> int:
    """Rows matched by the DML statement that produced ``result``."""
    return cast(CursorResult[Any], result).rowcount


async def inserted(session: AsyncSession, row: RowT) -> RowT:
    """Insert ``row`` in the caller's transaction; returns it as stored (server defaults filled in)."""
    session.add(row)
    await session.flush()
    await session.refresh(row)
    return row
