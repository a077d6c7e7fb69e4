"""Keep the cyclic garbage collector off the start-up heap of a serving process.

A serving process builds a large, long-lived heap at start-up, which every full collection would walk
again during requests that allocate a lot (a batch of events, a pack compile). After start-up it is
frozen (:func:`gc.freeze`: collections skip it), and the young threshold is raised to
:data:`YOUNG_THRESHOLD` so a compile's few thousand live objects are not collected mid-compile. The
default token encoding is loaded here too, so the first pack after a start does not pay for it.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from elephantasm.tokens import get_token_counter

YOUNG_THRESHOLD = 5000


@asynccontextmanager
async def frozen_startup_heap(runtime: Any) -> AsyncIterator[None]:
    """A background factory for ``create_app``: load the default token encoding, collect once,
    then freeze what survives."""
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
