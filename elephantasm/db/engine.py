"""The one engine and session factory: the composition root builds the pooled engine; one-off tools
(migrations, benchmark loaders) take an unpooled one from here too. Never called at import."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.pool import NullPool


def load_stored_json(text: str) -> Any:
    """Decode a json/jsonb value read from Postgres; a value nested too deeply for the decoder
    (stored before the API's depth limit existed) becomes a marker instead of failing the read."""
    try:
        return json.loads(text)
    except RecursionError:
        return {"_elided": "stored JSON nested too deeply to decode; not served"}


CLIENT_GRACE_SECONDS = 2.0
"""How long after the server's own ``statement_timeout`` the driver gives up on a statement: the
server cancels a slow statement cleanly first; the driver's timer only fires when the server
cannot answer at all (its processes stopped, the network gone)."""


@dataclass(frozen=True)
class DbTimeouts:
    """How long to wait for the database, so a stuck one becomes an error (503) instead of a hang.

    ``connect``: opening a connection; ``pool``: waiting for a pooled connection; ``statement``: one
    statement (Postgres's ``statement_timeout``, with the driver's own timer as the backstop for a
    server that does not answer). ``0`` for ``statement`` means no limit.
    """

    connect: float
    pool: float
    statement: float

    def connect_args(self) -> dict[str, Any]:
        """asyncpg's connect arguments for these limits (set once per connection: no per-query cost)."""
        args: dict[str, Any] = {"timeout": self.connect}
        if self.statement > 0:
            args["command_timeout"] = self.statement + CLIENT_GRACE_SECONDS
            args["server_settings"] = {"statement_timeout": str(int(self.statement * 1000))}
        return args


def create_engine(
    url: str,
    pool_size: int = 10,
    max_overflow: int = 10,
    *,
    pooled: bool = True,
    timeouts: DbTimeouts | None = None,
) -> AsyncEngine:
    """An asyncpg engine with a bounded pool (``pooled=False``: no pool, for one-off tools).

    No ``pool_pre_ping`` (a round trip per checkout): connections are recycled, and one broken by a
    database restart is invalidated on its first error, with every older connection of the pool.
    """
    connect_args = timeouts.connect_args() if timeouts else {}
    if not pooled:
        return create_async_engine(url, poolclass=NullPool, connect_args=connect_args)
    return create_async_engine(
        url,
        pool_size=pool_size,
        max_overflow=max_overflow,
        pool_recycle=1800,
        pool_timeout=timeouts.pool if timeouts else 30.0,
        connect_args=connect_args,
        # Driver errors would otherwise quote the bound values (user content, key hashes) into
        # exception messages, and from there into logs.
        hide_parameters=True,
        json_deserializer=load_stored_json,
    )


def create_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    """Sessions that keep loaded attributes after commit (responses are built after the commit)."""
    return async_sessionmaker(engine, expire_on_commit=False)


SessionFactory = Callable[[], AbstractAsyncContextManager[AsyncSession]]
"""Opens one session: ``Runtime.unit_of_work`` (commits on success) or ``Runtime.read_session``.
What a service takes when it needs several short transactions (never one across slow work)."""
