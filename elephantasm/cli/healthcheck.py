"""``python -m elephantasm.cli.healthcheck [--database]``: the container health check (exit 0 healthy).

Asks this container's API for ``/api/health``, or with ``--database`` (the dreamer) checks that the
database answers. Standard library and asyncpg only: a check costs little every few seconds.
"""

from __future__ import annotations

import asyncio
import os
import sys
import urllib.request

TIMEOUT_SECONDS = 5.0


def driver_dsn(url: str) -> str:
    """An SQLAlchemy ``postgresql+asyncpg://`` URL as the DSN asyncpg itself takes."""
    return url.replace("postgresql+asyncpg://", "postgresql://", 1)


def api_url(environ: dict[str, str]) -> str:
    """Where this container's API answers ``/api/health`` (a wildcard listen address means loopback)."""
    host = environ.get("ELEPHANTASM_HOST", "127.0.0.1")
    if host in ("0.0.0.0", "::", ""):
        host = "127.0.0.1"
    return f"http://{host}:{environ.get('ELEPHANTASM_PORT', '8000')}/api/health"


def api_healthy(url: str) -> bool:
    """Whether ``url`` answers 200 in time."""
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_SECONDS) as response:
            return bool(response.status == 200)
    except OSError:
        return False


async def database_healthy(url: str) -> bool:
    """Whether the database at ``url`` (an SQLAlchemy ``postgresql+asyncpg://`` URL) answers ``SELECT 1``."""
    import asyncpg

    try:
        conn = await asyncpg.connect(driver_dsn(url), timeout=TIMEOUT_SECONDS)
        try:
            return bool(await asyncio.wait_for(conn.fetchval("SELECT 1"), TIMEOUT_SECONDS) == 1)
        finally:
            await conn.close()
    except (TimeoutError, OSError, asyncpg.PostgresError):
        return False


def main(argv: list[str]) -> int:
    """0 when healthy, 1 otherwise."""
    if argv[:1] == ["--database"]:
        url = os.environ.get("ELEPHANTASM_DATABASE_URL", "")
        return 0 if url and asyncio.run(database_healthy(url)) else 1
    return 0 if api_healthy(api_url(dict(os.environ))) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
