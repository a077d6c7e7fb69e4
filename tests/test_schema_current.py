"""``upgrade_async`` to head runs Alembic only when the database is behind: a missing or older
``alembic_version`` is migrated, a current one is left alone without Alembic ever being imported.

Each test runs the upgrade in a fresh interpreter (``sys.modules`` there shows what was loaded),
over a database of its own on the session's server.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import pytest
from alembic.script import ScriptDirectory

from elephantasm.db.migrate import HEAD_REVISION, alembic_config, upgrade_async
from tests.support.databases import create_database, drop_database, fetch_value
from tests.support.servers import REPO_ROOT

PROBE = """
import asyncio, json, sys
from elephantasm.db.migrate import upgrade_async
asyncio.run(upgrade_async(sys.argv[1]))
print(json.dumps("alembic" in sys.modules))
"""


def upgrade_in_fresh_process(url: str) -> bool:
    """Run ``upgrade_async(url)`` in a new interpreter; whether it imported Alembic."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, url], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, check=True
    )
    loaded: bool = json.loads(done.stdout)
    return loaded


@pytest.fixture
def empty_db(pg_url: str) -> Iterator[str]:
    """A brand-new, empty database; dropped afterwards."""
    url = create_database(pg_url, "head")
    yield url
    drop_database(url)


def test_head_revision_is_alembics_only_head(pg_url: str) -> None:
    assert ScriptDirectory.from_config(alembic_config(pg_url)).get_heads() == [HEAD_REVISION]


async def test_a_database_without_alembic_version_is_migrated(empty_db: str) -> None:
    assert upgrade_in_fresh_process(empty_db) is True
    assert await fetch_value(empty_db, "SELECT version_num FROM alembic_version") == HEAD_REVISION
    assert await fetch_value(empty_db, "SELECT to_regclass('events') IS NOT NULL") is True


async def test_a_database_behind_head_is_migrated(empty_db: str) -> None:
    await upgrade_async(empty_db, "0001")
    width = "SELECT character_maximum_length FROM information_schema.columns WHERE table_name = 'generations' AND column_name = 'kv_status'"
    assert await fetch_value(empty_db, width) == 8
    assert upgrade_in_fresh_process(empty_db) is True
    assert await fetch_value(empty_db, "SELECT version_num FROM alembic_version") == HEAD_REVISION
    assert await fetch_value(empty_db, width) == 16


async def test_a_database_at_head_is_left_alone_without_loading_alembic(empty_db: str) -> None:
    await upgrade_async(empty_db)
    assert upgrade_in_fresh_process(empty_db) is False
    assert await fetch_value(empty_db, "SELECT version_num FROM alembic_version") == HEAD_REVISION
