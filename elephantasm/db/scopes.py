"""Named predicates every read is built from, so tenancy (another org's row is a 404, never a leak)
and liveness are spelled one way. Each takes a table (``Model.__table__``) or an ORM entity class."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import ColumnElement, select
from sqlmodel import col

from elephantasm.db.models import Anima, Memory


def _col(source: Any, name: str) -> Any:
    return source.c[name] if hasattr(source, "c") else getattr(source, name)


def org_scoped(source: Any, org_id: uuid.UUID) -> ColumnElement[bool]:
    """The row belongs to ``org_id``."""
    return _col(source, "org_id") == org_id


def live_anima_row(source: Any = Anima) -> ColumnElement[bool]:
    """An ``animas`` row that is not deleted."""
    return _col(source, "deleted_at").is_(None)


def live_anima(anima_col: Any) -> ColumnElement[bool]:
    """The anima ``anima_col`` refers to is not deleted."""
    return anima_col.in_(select(col(Anima.id)).where(live_anima_row()).scalar_subquery())


def live_memory(source: Any = Memory) -> ColumnElement[bool]:
    """A memory (or knowledge item) that is not deleted (forgotten)."""
    return _col(source, "deleted_at").is_(None)


def visible(source: Any, org_id: uuid.UUID) -> list[ColumnElement[bool]]:
    """A memory or knowledge row the org may read: its own, not deleted, of a live anima."""
    return [org_scoped(source, org_id), live_memory(source), live_anima(_col(source, "anima_id"))]


def anima_key(anima_id: uuid.UUID, org_id: uuid.UUID | None = None) -> Any:
    """The key (``animas.key``) of anima ``anima_id`` (if it is ``org_id``'s, when given), as a scalar
    subquery (one primary-key probe, evaluated once per statement)."""
    stmt = select(col(Anima.key)).where(col(Anima.id) == anima_id)
    return (stmt if org_id is None else stmt.where(org_scoped(Anima, org_id))).scalar_subquery()


def of_anima(
    source: Any, anima_id: uuid.UUID, key: int | None = None, org_id: uuid.UUID | None = None
) -> list[ColumnElement[bool]]:
    """An ``events`` row of anima ``anima_id``, by its ``anima_key`` (the events' indexes lead with it).

    ``key``: the anima's key as the caller read it from the anima row (checked against its org);
    without it the key is looked up, as the key of ``org_id``'s anima when that is given. The key is
    an event's only reference to its anima and org.
    """
    return [_col(source, "anima_key") == (anima_key(anima_id, org_id) if key is None else key)]
