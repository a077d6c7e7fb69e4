"""Run hot ``text()`` statements on the asyncpg connection, inside SQLAlchemy's transaction.

Where many rows come back per request (a compile's candidates, a batch's stored events), SQLAlchemy's
``Row`` processing costs more than the driver's decoding. Each statement is compiled once by the
engine's dialect (the ``$n`` form SQLAlchemy would send) and kept prepared by asyncpg; rows come back
as asyncpg ``Record`` objects. :func:`fetch` starts SQLAlchemy's lazily begun transaction first, so
a statement never runs outside the caller's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import asyncpg
from sqlalchemy import text
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import DataError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.elements import TextClause

_BEGIN = text("SELECT 1")
# id(statement) -> (statement, SQL in the driver's form, parameter names in order). The statements
# are module-level constants, so ids are stable and the cache stays as small as their number;
# the statement is kept in the value so its id cannot be reused by another object.
_COMPILED: dict[int, tuple[TextClause, str, tuple[str, ...]]] = {}
_MAX_COMPILED = 256


def _compiled(stmt: TextClause, dialect: Dialect) -> tuple[str, tuple[str, ...]]:
    hit = _COMPILED.get(id(stmt))
    if hit is None or hit[0] is not stmt:
        if len(_COMPILED) >= _MAX_COMPILED:  # only statements built per call could get here
            _COMPILED.clear()
        compiled = stmt.compile(dialect=dialect)
        hit = (stmt, str(compiled), tuple(compiled.positiontup or ()))
        _COMPILED[id(stmt)] = hit
    return hit[1], hit[2]


async def fetch(conn: AsyncConnection, stmt: TextClause, params: Mapping[str, Any]) -> list[Any]:
    """All rows of ``stmt`` with ``params``, as asyncpg records, inside ``conn``'s open transaction."""
    sql, names = _compiled(stmt, conn.dialect)
    try:
        return await _fetch(conn, sql, [params[name] for name in names])
    except asyncpg.exceptions.IntegrityConstraintViolationError as exc:
        raise IntegrityError(sql, None, _DriverError(exc)) from exc
    except (asyncpg.exceptions.DataError, asyncpg.exceptions._base.DataError) as exc:
        raise DataError(sql, None, _DriverError(exc)) from exc


async def _fetch(conn: AsyncConnection, sql: str, args: list[Any]) -> list[Any]:
    driver = (await conn.get_raw_connection()).driver_connection
    assert driver is not None  # a checked-out connection always has one
    if conn.in_transaction() and not driver.is_in_transaction():
        await conn.execute(_BEGIN)  # SQLAlchemy's BEGIN (isolation, read only) goes out with it
    try:
        return await driver.fetch(sql, *args)
    except Exception:
        if not conn.in_transaction():
            # Outside a transaction of ours a failed statement can leave the server in a block the
            # pool does not know of (its next ``BEGIN ... ISOLATION LEVEL`` would fail): end it.
            await driver.execute("SELECT 1")
        raise


class _DriverError(Exception):
    """Stands where SQLAlchemy's asyncpg adapter puts its own exception (``DBAPIError.orig``): the
    SQLSTATE, and the driver's exception as the cause, so ``elephantasm.db.errors`` maps a data or
    integrity error from here to the same 4xx as one raised through SQLAlchemy."""

    def __init__(self, exc: Exception) -> None:
        super().__init__(str(exc))
        self.sqlstate = getattr(exc, "sqlstate", None)
        self.__cause__ = exc
