"""How a CLI process ends: a termination signal unwinds it like Ctrl-C does.

Python's default for SIGTERM and SIGHUP kills the interpreter on the spot: no ``finally`` block and
no ``atexit`` handler runs, so the embedded Postgres this process started (pgserver stops it from
``atexit`` when its last user exits) would keep running. Raising ``SystemExit`` instead runs both.
uvicorn catches SIGTERM itself while it serves, shuts down gracefully and then raises the signal
again, which lands here.
"""

from __future__ import annotations

import signal
from types import FrameType

TERMINATING = (signal.SIGTERM, signal.SIGHUP)


def _exit(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def exit_cleanly_on_signals() -> None:
    """Make SIGTERM and SIGHUP end this process with ``SystemExit(128 + signal)`` (cleanups run)."""
    for sig in TERMINATING:
        signal.signal(sig, _exit)
