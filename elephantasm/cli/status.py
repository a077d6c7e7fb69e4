"""``elephantasm status``: where the database is, its schema revision and row counts.

Read-only and quick: one asyncpg connection and plain SQL, without the ORM, Alembic or the runtime.
"""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.table import Table

from elephantasm.cli.healthcheck import driver_dsn
from elephantasm.db import event_state
from elephantasm.settings import Settings

COUNTED = ("orgs", "api_keys", "animas", "events", "memories", "knowledge", "dream_runs")
"""The tables whose rows ``status`` counts (names of ``db/models.py`` tables)."""

PENDING = f"SELECT count(*) FROM events e JOIN animas a ON a.key = e.anima_key WHERE {event_state.pending('e', 'a')}"


async def status(args: argparse.Namespace, settings: Settings) -> int:
    """Print where the database is, its version and schema revision, and row counts; 1 if no schema."""
    import asyncpg

    if settings.database_url:
        url = settings.database_url
    else:  # started (or reused) like every command does: see runtime.resolve_database_url
        from elephantasm.db.embedded import start_embedded_postgres

        url = start_embedded_postgres(settings.data_dir)
    console = Console()
    conn = await asyncpg.connect(driver_dsn(url))
    try:
        version = await conn.fetchval("SHOW server_version")
        where = "embedded" if settings.uses_embedded_postgres else "external"
        console.print(f"Database: {where} PostgreSQL {version}")
        if await conn.fetchval("SELECT to_regclass('alembic_version')") is None:
            console.print("No schema yet: `elephantasm migrate` (or `serve`) creates it.")
            return 1
        revision = await conn.fetchval("SELECT string_agg(version_num, ', ') FROM alembic_version")
        counts = [(name, await conn.fetchval(f"SELECT count(*) FROM {name}")) for name in COUNTED]
        pending = await conn.fetchval(PENDING)
    finally:
        await conn.close()
    console.print(f"Schema revision: {revision}")
    table = Table("table", "rows")
    for name, n in counts:
        table.add_row(name, str(n))
    table.add_row("events pending distillation", str(pending))
    console.print(table)
    return 0
