"""Column types for JSON columns whose most common value is stored as SQL NULL."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator


class DefaultAsNullJsonb(TypeDecorator[dict[str, Any]]):
    """``jsonb`` where SQL NULL stands for one object, the column's usual value (``events.meta``:
    ``{}`` on nearly every row, a 5-byte datum where NULL costs a bit). The ORM and
    :mod:`elephantasm.db.bulk` store it as NULL and read NULL back as it; raw SQL uses :meth:`read_sql`.
    """

    impl = JSONB
    cache_ok = True

    def __init__(self, default: str) -> None:
        """``default``: the object NULL stands for, as JSON text (hashable, for the statement cache)."""
        super().__init__(none_as_null=True)  # None binds as SQL NULL, not JSON null
        self.default = default
        self._value = json.loads(default)

    def process_bind_param(self, value: dict[str, Any] | None, dialect: Dialect) -> dict[str, Any] | None:
        return None if value is None or value == self._value else value

    def process_result_value(self, value: Any, dialect: Dialect) -> dict[str, Any]:
        return json.loads(self.default) if value is None else value  # a fresh copy: callers may mutate it

    def read_sql(self, column: str) -> str:
        """SQL of the stored value of ``column`` (an expression of this type) as jsonb."""
        return f"coalesce({column}, '{self.default}'::jsonb)"

    def store_sql(self, value: str) -> str:
        """SQL of what to store for the jsonb expression ``value``: NULL for the default object."""
        return f"nullif({value}, '{self.default}'::jsonb)"
