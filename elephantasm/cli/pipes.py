"""A command whose reader went away (``elephantasm animas export ID | head``) ends quietly."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

SIGPIPE_EXIT = 141
"""128 + SIGPIPE: the status a shell reports for a command killed by a closed pipe."""


@contextmanager
def quiet_broken_pipe() -> Iterator[None]:
    """Turn a closed standard output into exit status 141 instead of a ``BrokenPipeError`` traceback.

    Standard output is pointed at ``/dev/null`` first, so the interpreter's own flush at exit
    does not fail a second time on the dead pipe.
    """
    try:
        yield
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise SystemExit(SIGPIPE_EXIT) from None
