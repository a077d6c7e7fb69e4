"""The server's embedding space as the ``smallint`` code rows store (``embedding_spaces``).

A process resolves its embedder's label once and keeps the code. A new label is registered in a
transaction of its own, committed before any row uses the code; codes are never deleted, so a cached
one stays valid for the life of the database.
"""

from __future__ import annotations

from typing import Any, Protocol

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncEngine

from elephantasm.db.models import EmbeddingSpaceRow
from elephantasm.db.tables import table_of
from elephantasm.llm.embedders import Embedder


class SpaceSource(Protocol):
    """What :func:`current_space` reads (the ``Runtime``): its embedder, engine and fact cache."""

    embedder: Embedder
    engine: AsyncEngine
    slow_facts: dict[str, tuple[float, Any]]


_SPACE = table_of(EmbeddingSpaceRow)


async def register_space(engine: AsyncEngine, label: str) -> int:
    """The code of ``label``, added to ``embedding_spaces`` (and committed) if it is new."""
    async with engine.begin() as conn:
        await conn.execute(pg_insert(_SPACE).values(label=label).on_conflict_do_nothing(index_elements=["label"]))
    # A new statement after the commit: it also sees a row a concurrent registrant committed while
    # this insert waited on it and then did nothing.
    async with engine.connect() as conn:
        return int((await conn.execute(select(_SPACE.c.id).where(_SPACE.c.label == label))).scalar_one())


async def current_space(runtime: SpaceSource) -> int:
    """The code of the runtime's embedder's space (resolved once per runtime)."""
    label = runtime.embedder.space.label()
    key = f"space_id:{label}"
    known = runtime.slow_facts.get(key)
    if known is None:
        known = (0.0, await register_space(runtime.engine, label))
        runtime.slow_facts[key] = known
    return int(known[1])
