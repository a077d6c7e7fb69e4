"""Hold the cyclic garbage collector off during a short, allocation-heavy, synchronous section.

A pack compile builds a few thousand short-lived objects (candidates, items, lines, wire dicts)
in one synchronous stretch. With the default thresholds the collector runs several young
collections in the middle of it, finds nearly everything still alive, and promotes it; the
promoted objects are freed by reference counting moments later, but the older generations they
reached are walked again by the next full collection. Measured on the 10k-memory benchmark anima
(``benchmarks/RESULTS.md``, "issue 14 compile"): ~9 young and ~1 middle collection per compile.

Pausing the collector only for the section (no ``await`` inside it, so no other task runs on the
loop meanwhile) lets those objects die by reference counting first; the allocation count is kept,
so the collector runs as usual right after. Nothing is leaked: cycles created in the section are
collected by that next run.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """Disable the cyclic collector for the ``with`` block; restore its previous state after.

    Re-entrant and safe when the collector was already disabled (it then stays disabled).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
