"""What compiling and serving packs depend on, handed in explicitly (built at the edge: :meth:`PackDeps.of`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncEngine

from elephantasm.llm.embedders import Embedder
from elephantasm.services.packs.state import PackState
from elephantasm.services.spaces import current_space

if TYPE_CHECKING:
    from elephantasm.runtime import Runtime


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

    @classmethod
    def of(cls, runtime: Runtime) -> PackDeps:
        """The runtime's pack dependencies and settings."""
        s = runtime.settings
        return cls(
            engine=runtime.engine,
            state=runtime.packs,
            clock=runtime.clock,
            embedder=runtime.embedder,
            space=partial(current_space, runtime),
            default_max_tokens=s.default_max_tokens,
            default_encoding=s.default_encoding,
            as_of_bucket_seconds=s.as_of_bucket_seconds,
            compress_packs=s.compress_packs,
            pack_retention_per_anima=s.pack_retention_per_anima,
        )
