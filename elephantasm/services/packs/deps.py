"""What compiling and serving packs depend on, handed in explicitly (built at the edge by ``Runtime.packs``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncEngine

from elephantasm.llm.embedders import Embedder
from elephantasm.services.packs.state import PackState


@dataclass(frozen=True, slots=True)
class PackDeps:
    """A compile reads in a snapshot transaction of its own (and may take a second connection from
    the pool), and recording a pack is a short transaction after the answer: so the engine, not a
    session. ``state``: the process's snapshot LRU, counters, in-flight compiles and recall batcher."""

    engine: AsyncEngine
    state: PackState
    clock: Callable[[], datetime]
    embedder: Embedder
    space: Callable[[], Awaitable[int]]
    """The code of the embedder's space (``services.spaces``)."""
    default_max_tokens: int
    default_encoding: str
    as_of_bucket_seconds: int
    compress_packs: bool
    pack_retention_per_anima: int
