"""The composition root: builds everything a process needs (API, dreamer, CLI) from Settings."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from elephantasm.db.embedded import start_embedded_postgres
from elephantasm.db.engine import DbTimeouts, create_engine, create_sessionmaker
from elephantasm.db.errors import domain_errors
from elephantasm.db.keyset import CURSOR_KEY_INFO, cursor_key
from elephantasm.domain.dreaming import DistillEngine
from elephantasm.llm.embedders import Embedder
from elephantasm.llm.factory import build_dream_engine, build_embedder
from elephantasm.local.holder import LocalModels
from elephantasm.security import load_or_create_secret
from elephantasm.services.dreams.deps import DreamDeps, DreamLimits
from elephantasm.services.dreams.tasks import DreamTasks
from elephantasm.services.forget import ForgetHook
from elephantasm.services.kv import forgetting as kv_forgetting
from elephantasm.services.kv.prefix import ChatPacks
from elephantasm.services.packs import PackDeps, PackState, build_request, compile_now
from elephantasm.services.purge import AnimaPurgeHook
from elephantasm.services.spaces import SpaceFacts, current_space
from elephantasm.settings import Settings

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
    dream_engine: DistillEngine
    """The distillation engine: offline, or the LLM one when configured (``llm/factory.py``)."""
    local: LocalModels
    """The local GGUF model (model-level memory), loaded on first use, and its snapshot store."""
    clock: Clock = utc_now
    dream_tasks: DreamTasks = field(default_factory=DreamTasks)
    """Background dream runs of this process (manual triggers, scheduler); cancelled on close."""
    pack_state: PackState = field(default_factory=PackState)
    """Pack snapshot LRU, cache counters and the recall batcher of this process."""
    anima_purge_hooks: list[AnimaPurgeHook] = field(default_factory=list)
    """Passed to a hard purge of an anima (``services/purge.py``), called before its rows are deleted
    in the purge's transaction: stores outside Postgres (e.g. KV-snapshot files) erase their share."""
    forget_hooks: list[ForgetHook] = field(default_factory=list)
    """Passed to forgetting memories or knowledge (``services/forget.py``), called in the deleting
    transaction: stores that copied their text erase it."""
    spaces: SpaceFacts = field(default_factory=SpaceFacts)
    """The embedding-space facts this process learnt (``services/spaces.py``)."""
    background_pool: tuple[AsyncEngine, async_sessionmaker[AsyncSession]] | None = field(default=None, repr=False)
    """The pool of background work (it connects on first use); None when this runtime's own pool is it."""

    @property
    def background(self) -> Runtime:
        """This runtime for work that is long by nature (dream runs, imports, exports, purges): the
        same everything over a second pool whose statements may run for
        ``db_background_statement_timeout_seconds`` instead of an API request's few seconds."""
        if self.background_pool is None:
            return self
        engine, sessionmaker = self.background_pool
        return dataclasses.replace(self, engine=engine, sessionmaker=sessionmaker, background_pool=None)

    @property
    def dreams(self) -> DreamDeps:
        """What a dream run uses, over the background pool (a run is long by nature)."""
        bg = self.background
        return DreamDeps(
            unit_of_work=bg.unit_of_work,
            read_session=bg.read_session,
            pool=bg.engine,
            clock=self.clock,
            embedder=self.embedder,
            distiller=self.dream_engine,
            space=partial(current_space, bg),
            tasks=self.dream_tasks,
            limits=DreamLimits.of(self.settings),
        )

    @property
    def packs(self) -> PackDeps:
        """What compiling and serving packs use, over this runtime's own pool (a compile serves a request)."""
        s = self.settings
        return PackDeps(
            engine=self.engine,
            state=self.pack_state,
            clock=self.clock,
            embedder=self.embedder,
            space=partial(current_space, self),
            default_max_tokens=s.default_max_tokens,
            default_encoding=s.default_encoding,
            as_of_bucket_seconds=s.as_of_bucket_seconds,
            compress_packs=s.compress_packs,
            pack_retention_per_anima=s.pack_retention_per_anima,
        )

    @property
    def chat_packs(self) -> ChatPacks:
        """How chat compiles packs: the pack service over :attr:`packs`, and the chat settings."""
        s, deps = self.settings, self.packs
        request, compile_ = partial(build_request, deps), partial(compile_now, deps)
        return ChatPacks(request, compile_, s.local_pack_max_tokens, s.local_system_prompt, s.local_pack_query)

    @asynccontextmanager
    async def unit_of_work(self) -> AsyncIterator[AsyncSession]:
        """A session whose transaction commits on success and rolls back on error.

        The commit happens before the caller responds, so an acknowledged write is durable.
        Integrity and data errors (also at commit) surface as domain errors (``db/errors.py``).
        """
        with domain_errors():
            async with self.sessionmaker() as session, session.begin():
                yield session

    @asynccontextmanager
    async def read_session(self) -> AsyncIterator[AsyncSession]:
        """A session for reads only (its implicit transaction is rolled back at the end); data errors
        surface as domain errors, as in :meth:`unit_of_work`."""
        with domain_errors():
            async with self.sessionmaker() as session:
                yield session

    async def close(self) -> None:
        """Stop this process's dream runs (they record themselves as failed), then release the pool."""
        await self.dream_tasks.close()
        await self.pack_state.aclose()  # writes the last batch of pack recalls
        if self.background_pool is not None:
            await self.background_pool[0].dispose()
        await self.engine.dispose()


def resolve_database_url(settings: Settings) -> str:
    """The configured URL, or the embedded server's (starting it if needed)."""
    if settings.database_url:
        return settings.database_url
    return start_embedded_postgres(settings.data_dir)


def build_engine(settings: Settings, url: str, *, background: bool = False) -> AsyncEngine:
    """The pooled engine of an API process (``background``: of background work, see ``Runtime.background``)."""
    s = settings
    statement = s.db_background_statement_timeout_seconds if background else s.db_statement_timeout_seconds
    timeouts = DbTimeouts(s.db_connect_timeout_seconds, s.db_pool_timeout_seconds, statement)
    return create_engine(url, s.db_pool_size, s.db_max_overflow, timeouts=timeouts)


def signed_sessionmaker(engine: AsyncEngine, secret: bytes) -> async_sessionmaker[AsyncSession]:
    """A sessionmaker whose sessions carry the cursor-signing key of ``secret``.

    Pagination cursors are signed with it, so every process of the service (workers, dreamer)
    accepts the cursors any of them handed out.
    """
    sessionmaker = create_sessionmaker(engine)
    sessionmaker.configure(info={CURSOR_KEY_INFO: cursor_key(secret)})
    return sessionmaker


def build_runtime(
    settings: Settings, database_url: str | None = None, clock: Clock = utc_now, *, background: bool = False
) -> Runtime:
    """Construct the runtime. Nothing here runs at import time; call it at the process edge.

    ``background``: the whole process does background work (the CLI, ``elephantasm dreamer``), so
    its one pool has the background limits and ``runtime.background`` is the runtime itself.
    """
    url = database_url or resolve_database_url(settings)
    engine = build_engine(settings, url, background=background)
    secret = load_or_create_secret(settings.secret_key, settings.data_dir)
    sessionmaker = signed_sessionmaker(engine, secret)
    background_pool = None
    if not background:
        background_engine = build_engine(settings, url, background=True)
        background_pool = (background_engine, signed_sessionmaker(background_engine, secret))
    local = LocalModels(settings)
    return Runtime(
        settings=settings,
        database_url=url,
        engine=engine,
        sessionmaker=sessionmaker,
        secret=secret,
        embedder=build_embedder(settings),
        clock=clock,
        dream_engine=build_dream_engine(settings),
        local=local,
        pack_state=PackState(settings.pack_cache_bytes),
        anima_purge_hooks=[partial(kv_forgetting.purge_hook, local)],
        forget_hooks=[partial(kv_forgetting.forget_hook, local)],
        background_pool=background_pool,
    )
