"""Serving processes freeze their start-up heap (api/heap.py) and release it at shutdown."""

from __future__ import annotations

import gc

from api.heap import YOUNG_THRESHOLD, frozen_startup_heap


async def test_startup_heap_is_frozen_while_serving_and_released_after() -> None:
    gc.unfreeze()
    assert gc.get_freeze_count() == 0
    before = gc.get_threshold()
    async with frozen_startup_heap(None):
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold()[0] >= YOUNG_THRESHOLD
        garbage = [[]]
        garbage[0].append(garbage)  # a cycle made after start-up is still collected
        del garbage
        assert gc.collect() > 0
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == before
