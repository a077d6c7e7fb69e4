"""Hold the cyclic garbage collector off during a short, allocation-heavy section of a compile.

A pack compile builds a few thousand short-lived objects; the collector would run young
collections in the middle of it, find nearly everything still alive, and promote it to be walked
again by the next full collection (``benchmarks/RESULTS.md``).

Pausing the collector for the section lets those objects die by reference counting first; the
allocation count is kept, so the collector runs as usual right after. Nothing is leaked: cycles
created meanwhile are collected by that next run. Keep a section synchronous (no ``await``
inside): a pause held across an await also holds the collector off for every task that runs
meanwhile, and under steady concurrent load the sections could overlap without end. Sections of
several threads may still overlap; the collector comes back when the last one ends, and only if it
was on when the first began.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_restore = False


@contextmanager
def paused_gc() -> Iterator[None]:
    """Disable the cyclic collector for the ``with`` block (re-entrant, overlapping-safe)."""
    global _depth, _restore
    with _lock:
        if _depth == 0:
            _restore = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _restore:
                gc.enable()
