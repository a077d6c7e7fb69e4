"""``serve`` keeps the embedded Postgres running: a postmaster that died (killed, crashed) is started
again, with back-off while it will not start, so the service recovers without a restart of ``serve``.

A thread, not a task: starting Postgres blocks for a second or more (``pg_ctl -w``), and the
``--workers`` parent has no event loop of its own. A stopped (SIGSTOPped) postmaster is alive and
is left alone: requests answer 503 within the database timeouts until it continues.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from elephantasm.db.embedded import EmbeddedPostgres, embedded_postgres
from elephantasm.settings import Settings

log = logging.getLogger(__name__)


def backoff_seconds(failures: int, interval: float, cap: float) -> float:
    """The wait after ``failures`` restarts in a row failed: ``interval · 2^failures``, at most ``cap``."""
    return min(interval * 2 ** min(failures, 30), cap)


class PostmasterSupervisor:
    """Checks every ``interval`` seconds that the postmaster runs, and starts it again if not."""

    def __init__(self, embedded: EmbeddedPostgres, interval: float, max_backoff: float) -> None:
        self.embedded = embedded
        self.interval = interval
        self.max_backoff = max_backoff
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="postmaster-supervisor", daemon=True)

    def start(self) -> None:
        """Begin watching (in a daemon thread)."""
        self._thread.start()

    def stop(self) -> None:
        """Stop watching; returns once a restart in progress has finished."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def _watch(self) -> None:
        failures = 0
        delay = self.interval
        while not self._stop.wait(delay):
            if self.embedded.running():
                failures, delay = 0, self.interval
                continue
            log.warning("the embedded Postgres in %s is not running; starting it again", self.embedded.pgdata)
            try:
                self.embedded.restart()
            except Exception as exc:  # pg_ctl failed (e.g. the old shared memory is still attached)
                failures += 1
                delay = backoff_seconds(failures, self.interval, self.max_backoff)
                log.error("restarting the embedded Postgres failed (%s); next try in %.0f s", exc, delay)
                continue
            failures, delay = 0, self.interval
            log.warning("the embedded Postgres is running again")


@contextmanager
def supervised_postgres(settings: Settings) -> Iterator[PostmasterSupervisor | None]:
    """For the block's duration, keep this process's embedded Postgres running (nothing to do with
    an external database, or when ``embedded_supervise_seconds`` is 0)."""
    if not settings.uses_embedded_postgres or settings.embedded_supervise_seconds <= 0:
        yield None
        return
    supervisor = PostmasterSupervisor(
        embedded_postgres(settings.data_dir),
        settings.embedded_supervise_seconds,
        settings.embedded_restart_backoff_max_seconds,
    )
    supervisor.start()
    try:
        yield supervisor
    finally:
        supervisor.stop()
