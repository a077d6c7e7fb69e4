"""The one engine and session factory: the composition root builds the pooled engine; one-off tools
(migrations, benchmark loaders) take an unpooled one from here too. Never called at import."""

from __future__ import annotations

import json
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


def create_engine(url: str, pool_size: int = 10, max_overflow: int = 10, *, pooled: bool = True) -> AsyncEngine:
    """An asyncpg engine with a bounded pool (``pooled=False``: no pool, for one-off tools).

    No ``pool_pre_ping``: it costs a round trip on every checkout (≈10 % of API CPU on the
    extract path). Connections are recycled instead, and a connection broken by a database
    restart is invalidated by SQLAlchemy on first error, so only that one request fails.
    """
    if not pooled:
        return create_async_engine(url, poolclass=NullPool)
    return create_async_engine(
        url,
        pool_size=pool_size,
        max_overflow=max_overflow,
        pool_recycle=1800,
        # Driver errors would otherwise quote the bound values (user content, key hashes) into
        # exception messages, and from there into logs.
        hide_parameters=True,
        json_deserializer=load_stored_json,
    )


def create_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    """Sessions that keep loaded attributes after commit (responses are built after the commit)."""
    return async_sessionmaker(engine, expire_on_commit=False)
