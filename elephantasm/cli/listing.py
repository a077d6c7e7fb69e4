"""What every ``… list`` command prints: a table that keeps ids whole, or ``--json``.

Ids are what people copy from a listing into the next command, so their columns never wrap or
shorten; the other columns fold onto more lines when the terminal is narrow (80 columns).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from rich.console import Console
from rich.table import Table

Record = Mapping[str, Any]


@dataclass(frozen=True)
class Column:
    """One table column: its header, the cell text of a record, and whether it holds an id."""

    header: str
    cell: Callable[[Record], str]
    identifier: bool = False


def field(name: str, identifier: bool = False, header: str | None = None) -> Column:
    """A column showing ``record[name]`` (datetimes to the minute, None as blank)."""
    return Column(header or name, lambda record: cell_text(record[name]), identifier)


def record_of(row: object, fields: Sequence[str]) -> dict[str, Any]:
    """The named attributes of ``row`` as a record (what ``--json`` prints of it)."""
    return {name: getattr(row, name) for name in fields}


def cell_text(value: Any) -> str:
    """How a value reads in a table cell."""
    if value is None:
        return ""
    if isinstance(value, datetime):
        return f"{value:%Y-%m-%d %H:%M}"
    return str(value)


def _json_value(value: Any) -> str:
    """Datetimes as ISO 8601 (as the API writes them), anything else (ids, enums) as its text."""
    return value.isoformat() if isinstance(value, datetime) else str(value)


def table_of(records: Sequence[Record], columns: Sequence[Column]) -> Table:
    """The records as a rich table whose id columns never wrap or shorten."""
    table = Table()
    for column in columns:
        if column.identifier:
            widest = max((len(column.cell(r)) for r in records), default=len(column.header))
            table.add_column(column.header, no_wrap=True, min_width=widest)
        else:
            table.add_column(column.header, overflow="fold")
    for record in records:
        table.add_row(*(column.cell(record) for column in columns))
    return table


def print_listing(console: Console, records: Sequence[Record], columns: Sequence[Column], as_json: bool) -> None:
    """Print ``records`` as a JSON array (every field, ids whole) or as a table of ``columns``."""
    if as_json:
        print(json.dumps(list(map(dict, records)), default=_json_value), flush=True)
    else:
        console.print(table_of(records, columns))
