"""Run Alembic migrations programmatically (used by the CLI, ``serve`` and the tests).

Alembic is imported only to migrate: :func:`upgrade_async` leaves a database already at
:data:`HEAD_REVISION` alone after one query (most CLI calls; Alembic would cost about a second).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import text

from elephantasm.db.engine import create_engine

if TYPE_CHECKING:
    from alembic.config import Config

_ROOT = Path(__file__).resolve().parents[2]

HEAD_REVISION = "0002"
"""The newest migration in ``alembic/versions`` (``tests/test_schema_current.py`` checks it against
Alembic's own heads, so a new migration fails the tests until this names it)."""


def alembic_config(url: str) -> Config:
    """An Alembic config pointing at this project's migrations and the given database."""
    from alembic.config import Config

    cfg = Config(str(_ROOT / "alembic.ini"))
    cfg.set_main_option("script_location", str(_ROOT / "alembic"))
    cfg.attributes["url"] = url
    return cfg


def upgrade(url: str, revision: str = "head") -> None:
    """Upgrade the database to ``revision`` (synchronous; runs its own event loop)."""
    from alembic import command

    command.upgrade(alembic_config(url), revision)


async def recorded_revisions(url: str) -> set[str]:
    """The revisions ``alembic_version`` records (empty when the table does not exist yet)."""
    engine = create_engine(url, pooled=False)
    try:
        async with engine.connect() as conn:
            if await conn.scalar(text("SELECT to_regclass('alembic_version')")) is None:
                return set()
            return set((await conn.scalars(text("SELECT version_num FROM alembic_version"))).all())
    finally:
        await engine.dispose()


async def upgrade_async(url: str, revision: str = "head") -> None:
    """Upgrade from inside a running event loop (Alembic's env uses ``asyncio.run``). Upgrading to
    head a database already there is a no-op that never loads Alembic."""
    if revision == "head" and await recorded_revisions(url) == {HEAD_REVISION}:
        return
    await asyncio.to_thread(upgrade, url, revision)
