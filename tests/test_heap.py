"""Serving processes freeze their start-up heap (elephantasm/gcpause.py) and release it at shutdown."""

from __future__ import annotations

import gc

from elephantasm import tokens
from elephantasm.gcpause import YOUNG_THRESHOLD, frozen_startup_heap
from elephantasm.settings import Settings


async def test_startup_heap_is_frozen_while_serving_and_released_after(settings: Settings) -> None:
    gc.unfreeze()
    assert gc.get_freeze_count() == 0
    before = gc.get_threshold()
    async with frozen_startup_heap(_Runtime(settings)):
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold()[0] >= YOUNG_THRESHOLD
        garbage = [[]]
        garbage[0].append(garbage)  # a cycle made after start-up is still collected
        del garbage
        assert gc.collect() > 0
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == before


async def test_default_encoding_is_loaded_at_startup(settings: Settings) -> None:
    """The first compile finds the default encoding's counter built, instead of loading it."""
    gc.unfreeze()
    tokens.get_token_counter.cache_clear()
    tokens.get_encoding.cache_clear()
    async with frozen_startup_heap(_Runtime(settings)):
        assert tokens.get_encoding.cache_info().currsize == 1
        counter = tokens.get_token_counter(settings.default_encoding)
        assert tokens.get_token_counter.cache_info().hits == 1  # built at start-up, not now
        assert counter.encoding == settings.default_encoding and counter("hello world") == 2


class _Runtime:
    """What the heap factory reads of a runtime: its settings."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
