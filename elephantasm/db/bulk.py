"""Many rows in one INSERT statement: one array per column, unnested by Postgres.

``session.execute(insert(table), rows)`` sends one INSERT per row (executemany); for the thousands of
rows a dream chunk writes, one statement is cheaper, storing the values a per-row insert would.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Table, text
from sqlalchemy.dialects import postgresql
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.ext.asyncio import AsyncSession

from elephantasm.db.json_columns import DefaultAsNullJsonb
from elephantasm.db.vectors import FastHalfVec, vector_literal

_DIALECT = postgresql.dialect()  # type: ignore[no-untyped-call]


def _array_of(column: Any, name: str) -> tuple[str, Any]:
    """(SQL of the bound array as the column's array type, how to prepare one value for it)."""
    if isinstance(column.type, ARRAY):
        # Postgres has no arrays of arrays: each value travels as its text literal, cast on select.
        return f"CAST(:{name} AS text[])", lambda v: None if v is None else "{" + ",".join(map(str, v)) + "}"
    if isinstance(column.type, DefaultAsNullJsonb):
        # The column's stored form: its default object is SQL NULL, as an ORM write would store it.
        stored = column.type.process_bind_param

        def prepare(value: Any) -> str | None:
            kept = stored(value, _DIALECT)
            return None if kept is None else json.dumps(kept)

        return f"CAST(CAST(:{name} AS text[]) AS jsonb[])", prepare
    if isinstance(column.type, JSONB):
        # As text, then cast: a jsonb[] parameter would need a codec of its own. None is stored as
        # SQLAlchemy's JSONB stores it: JSON null unless the type says SQL NULL.
        keep_null = column.type.none_as_null
        return f"CAST(CAST(:{name} AS text[]) AS jsonb[])", lambda v: None if v is None and keep_null else json.dumps(v)
    if isinstance(column.type, FastHalfVec):
        return f"CAST(CAST(:{name} AS text[]) AS halfvec[])", lambda v: None if v is None else vector_literal(v)
    return f"CAST(:{name} AS {column.type.compile(dialect=_DIALECT)}[])", lambda v: v


def insert_sql(table: Table, columns: Sequence[str], *, skip_conflicts: bool = False) -> tuple[str, list[Any]]:
    """The statement inserting the rows of arrays ``:c0 … :cN`` into ``columns``, and each column's
    value preparer. ``skip_conflicts``: ``ON CONFLICT DO NOTHING``."""
    arrays, prepare, picks = [], [], []
    for i, name in enumerate(columns):
        column = table.c[name]
        sql, prep = _array_of(column, f"c{i}")
        arrays.append(sql)
        prepare.append(prep)
        array = isinstance(column.type, ARRAY)
        picks.append(f"CAST(u.c{i} AS {column.type.compile(dialect=_DIALECT)})" if array else f"u.c{i}")
    names = ", ".join(f"c{i}" for i in range(len(columns)))
    sql = (
        f"INSERT INTO {table.name} ({', '.join(columns)}) "
        f"SELECT {', '.join(picks)} FROM unnest({', '.join(arrays)}) AS u({names})"
    )
    return sql + (" ON CONFLICT DO NOTHING" if skip_conflicts else ""), prepare


async def insert_rows(
    session: AsyncSession, table: Table, rows: Sequence[dict[str, Any]], *, skip_conflicts: bool = False
) -> None:
    """Insert ``rows`` (dicts with the same keys; columns left out get their defaults) in one statement."""
    if not rows:
        return
    columns = list(rows[0])
    sql, prepare = insert_sql(table, columns, skip_conflicts=skip_conflicts)
    params = {
        f"c{i}": [prep(row[name]) for row in rows] for i, (name, prep) in enumerate(zip(columns, prepare, strict=True))
    }
    await session.execute(text(sql), params)
