"""Run Alembic migrations programmatically (used by the CLI, ``serve`` and the tests)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from alembic.config import Config

from alembic import command

_ROOT = Path(__file__).resolve().parents[2]


def alembic_config(url: str) -> Config:
    """An Alembic config pointing at this project's migrations and the given database."""
    cfg = Config(str(_ROOT / "alembic.ini"))
    cfg.set_main_option("script_location", str(_ROOT / "alembic"))
    cfg.attributes["url"] = url
    return cfg


def upgrade(url: str, revision: str = "head") -> None:
    """Upgrade the database to ``revision`` (synchronous; runs its own event loop)."""
    command.upgrade(alembic_config(url), revision)


def downgrade(url: str, revision: str = "base") -> None:
    """Downgrade the database to ``revision``."""
    command.downgrade(alembic_config(url), revision)


async def upgrade_async(url: str, revision: str = "head") -> None:
    """Upgrade from inside a running event loop (Alembic's env uses ``asyncio.run``)."""
    await asyncio.to_thread(upgrade, url, revision)
