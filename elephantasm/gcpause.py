"""Keeping the cyclic garbage collector off the serving path.

:func:`frozen_startup_heap` freezes the long-lived start-up heap (collections skip it) and raises
the young threshold, so allocation-heavy requests do not walk it again and again. :func:`paused_gc`
holds the collector off for a compile's burst of short-lived objects, so they die by reference
counting instead of being walked and promoted; keep such a section synchronous (a pause held across
an ``await`` holds it off for every task).
"""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from elephantasm.tokens import get_token_counter

YOUNG_THRESHOLD = 5000

_lock = threading.Lock()
_depth = 0
_restore = False


@contextmanager
def paused_gc() -> Iterator[None]:
    """Disable the cyclic collector for the ``with`` block (re-entrant, overlapping-safe: across
    threads the collector comes back when the last section ends, and only if it was on before)."""
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


@asynccontextmanager
async def frozen_startup_heap(runtime: Any) -> AsyncIterator[None]:
    """A background factory for ``create_app``: load the default token encoding (so the first pack
    after a start does not pay for it), collect once, then freeze what survives."""
    await asyncio.to_thread(get_token_counter, runtime.settings.default_encoding)
    gc.collect()
    gc.freeze()
    thresholds = gc.get_threshold()
    gc.set_threshold(max(YOUNG_THRESHOLD, thresholds[0]), *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()  # let the shutdown's collections see everything again
