"""``python -m elephantasm.cli.healthcheck [--database]``: the container health check (exit 0 healthy).

Without arguments it asks the API in this container for ``/api/health``; with ``--database`` (the
dreamer, which serves no HTTP) it checks that the configured database answers a query. Standard
library and asyncpg only, so a check costs little every few seconds.
"""

from __future__ import annotations

import asyncio
import os
import sys
import urllib.request

TIMEOUT_SECONDS = 5.0


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
        conn = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://", 1), timeout=TIMEOUT_SECONDS)
    except (TimeoutError, OSError, asyncpg.PostgresError):
        return False
    try:
        return bool(await asyncio.wait_for(conn.fetchval("SELECT 1"), TIMEOUT_SECONDS) == 1)
    except (TimeoutError, OSError, asyncpg.PostgresError):
        return False
    finally:
        await conn.close()


def main(argv: list[str]) -> int:
    """0 when healthy, 1 otherwise."""
    if argv[:1] == ["--database"]:
        url = os.environ.get("ELEPHANTASM_DATABASE_URL", "")
        return 0 if url and asyncio.run(database_healthy(url)) else 1
    return 0 if api_healthy(api_url(dict(os.environ))) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
