"""Keep the cyclic garbage collector off the start-up heap of a serving process.

An API process holds a large, long-lived heap built at start-up (modules, the pydantic and Litestar
schemas, SQLAlchemy's compiled statements, the embedder). Every full (generation-2) collection
walks all of it, and a request that allocates a lot (a 1,000-event batch, a pack compile with ~500
candidates) triggers collections: measured in-process on batched extract, GC took ~20 µs of API
CPU per event (about a quarter of it). :func:`gc.freeze` moves what exists now into the permanent
generation, which collections skip; objects created later are collected as before. Used only by
serving processes (``serve`` and its workers), after start-up and before the first request.

The young generation's threshold is raised too (700 → :data:`YOUNG_THRESHOLD` allocations): a cold
pack compile keeps ~5,000 container objects alive until it answers (records, candidates, items), and
at 700 the collector ran ~4 young collections in the middle of each, walking and promoting what was
still alive (measured in-process on the 10k-memory ``inject`` anima: 0.72 ms of GC per compile →
0.03 ms). Garbage cycles are still collected, after a few thousand allocations instead of 700.

The default token encoding is loaded here too, before the first request, not by the first compile:
loading it took 0.35-0.7 s on a 2-core machine, which the first pack after every start or worker
spawn paid. (Its rank table is a dict of bytes to ints, which the collector does not track: frozen
or not, collections never walk it.)
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
