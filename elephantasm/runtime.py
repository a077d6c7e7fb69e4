"""The composition root: builds everything a process needs (API, dreamer, CLI) from Settings."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from elephantasm.db.embedded import start_embedded_postgres
from elephantasm.db.engine import create_engine, create_sessionmaker
from elephantasm.llm.embedders import Embedder
from elephantasm.llm.factory import build_embedder
from elephantasm.local.holder import LocalModels
from elephantasm.security import load_or_create_secret
from elephantasm.services.dreams.engines import build_dream_engine
from elephantasm.services.dreams.tasks import DreamTasks
from elephantasm.services.packs.state import PackState
from elephantasm.settings import Settings

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """The real clock (timezone-aware UTC)."""
    return datetime.now(UTC)


@dataclass
class Runtime:
    """Everything long-lived a process shares: settings, database, secret, clock, services' helpers."""

    settings: Settings
    database_url: str
    engine: AsyncEngine
    sessionmaker: async_sessionmaker[AsyncSession]
    secret: bytes
    embedder: Embedder
    clock: Clock = utc_now
    dream_engine: Any = None
    """The distillation engine (``DistillEngine``): offline, or the LLM one when configured."""
    dream_tasks: DreamTasks = field(default_factory=DreamTasks)
    """Background dream runs of this process (manual triggers, scheduler); cancelled on close."""
    packs: PackState = field(default_factory=PackState)
    """Pack snapshot LRU, cache counters and the recall batcher of this process."""
    local: LocalModels = field(default_factory=LocalModels)
    """The local GGUF model (model-level memory), loaded on first use."""

    @asynccontextmanager
    async def unit_of_work(self) -> AsyncIterator[AsyncSession]:
        """A session whose transaction commits on success and rolls back on error.

        The commit happens before the caller responds, so an acknowledged write is durable.
        """
        async with self.sessionmaker() as session:
            async with session.begin():
                yield session

    @asynccontextmanager
    async def read_session(self) -> AsyncIterator[AsyncSession]:
        """A session for reads only (its implicit transaction is rolled back at the end)."""
        async with self.sessionmaker() as session:
            yield session

    async def close(self) -> None:
        """Stop this process's dream runs (they record themselves as failed), then release the pool."""
        await self.dream_tasks.close()
        await self.packs.aclose()  # writes the last batch of pack recalls
        await self.engine.dispose()


def resolve_database_url(settings: Settings) -> str:
    """The configured URL, or the embedded server's (starting it if needed)."""
    if settings.database_url:
        return settings.database_url
    return start_embedded_postgres(settings.data_dir)


def build_runtime(settings: Settings, database_url: str | None = None, clock: Clock = utc_now) -> Runtime:
    """Construct the runtime. Nothing here runs at import time; call it at the process edge."""
    url = database_url or resolve_database_url(settings)
    engine = create_engine(url, settings.db_pool_size, settings.db_max_overflow)
    return Runtime(
        settings=settings,
        database_url=url,
        engine=engine,
        sessionmaker=create_sessionmaker(engine),
        secret=load_or_create_secret(settings.secret_key, settings.data_dir),
        embedder=build_embedder(settings),
        clock=clock,
        dream_engine=build_dream_engine(settings),
        packs=PackState(settings.pack_cache_bytes),
    )
