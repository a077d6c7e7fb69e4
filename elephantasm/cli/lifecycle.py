"""How a CLI process ends: a termination signal unwinds it like Ctrl-C does, a closed pipe quietly.

By default SIGTERM and SIGHUP kill the interpreter without running ``finally`` or ``atexit``, so
the embedded Postgres (stopped from ``atexit``) would keep running; raising ``SystemExit`` runs
both. SIGHUP is passed on as SIGTERM to whoever handles that at the moment (uvicorn while serving,
the dreamer's loop), since an exception raised by a handler lands in whatever task runs.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

SIGPIPE_EXIT = 141
"""128 + SIGPIPE: the status a shell reports for a command killed by a closed pipe."""


def _exit(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def _as_sigterm(signum: int, frame: FrameType | None) -> None:
    signal.raise_signal(signal.SIGTERM)


def exit_cleanly_on_signals() -> None:
    """Make SIGTERM (and SIGHUP, passed on as SIGTERM) end this process with ``SystemExit(143)``,
    so cleanups run."""
    signal.signal(signal.SIGTERM, _exit)
    signal.signal(signal.SIGHUP, _as_sigterm)


def exit_on_interrupt_too() -> None:
    """Make Ctrl-C (SIGINT) end this process like SIGTERM, with ``SystemExit(130)``.

    A ``KeyboardInterrupt`` is caught inside the event loop, which then waits for its worker
    threads on the way out; ``SystemExit`` leaves the loop at once (the stdio MCP bridge needs that).
    """
    signal.signal(signal.SIGINT, _exit)


@contextmanager
def quiet_broken_pipe() -> Iterator[None]:
    """Turn a closed standard output (``elephantasm animas export ID | head``) into exit status 141
    instead of a ``BrokenPipeError`` traceback. Standard output is pointed at ``/dev/null`` first,
    so the interpreter's own flush at exit does not fail a second time on the dead pipe."""
    try:
        yield
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise SystemExit(SIGPIPE_EXIT) from None
