"""The server's embedding space as the ``smallint`` code rows store (``embedding_spaces``).

A process resolves its embedder's label once and keeps the code. A new label is registered in a
transaction of its own, committed before any row uses the code; codes are never deleted, so a cached
one stays valid for the life of the database.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncEngine

from elephantasm.db.models import EmbeddingSpaceRow
from elephantasm.db.tables import table_of
from elephantasm.llm.embedders import Embedder


@dataclass
class SpaceFacts:
    """What a process learnt about embedding spaces, each at the cost of a query: the code of each
    label, and whether stored vectors of another space await ``reembed`` with the monotonic time it
    was learnt (``/api/health`` answers from it for a while)."""

    codes: dict[str, int] = field(default_factory=dict)
    reembed_pending: tuple[float, bool] | None = None


class SpaceSource(Protocol):
    """What :func:`current_space` reads (the ``Runtime``): its embedder, engine and space facts."""

    embedder: Embedder
    engine: AsyncEngine
    spaces: SpaceFacts


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
    label, codes = runtime.embedder.space.label(), runtime.spaces.codes
    if label not in codes:
        codes[label] = await register_space(runtime.engine, label)
    return codes[label]
