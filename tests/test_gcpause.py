"""paused_gc: the collector is off inside the block and back to its previous state after."""

from __future__ import annotations

import asyncio
import gc
import weakref

import pytest

from elephantasm.gcpause import paused_gc


def test_pauses_and_restores() -> None:
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
        with paused_gc():  # nested: the inner exit must not switch it back on early
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_restores_after_an_exception() -> None:
    with pytest.raises(RuntimeError), paused_gc():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_leaves_a_disabled_collector_disabled() -> None:
    gc.disable()
    try:
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


async def test_overlapping_sections_of_two_tasks() -> None:
    first_in, second_out = asyncio.Event(), asyncio.Event()

    async def first() -> None:
        with paused_gc():
            first_in.set()
            await second_out.wait()  # the other task's section ends while this one is open
            assert not gc.isenabled()
        assert gc.isenabled()

    async def second() -> None:
        await first_in.wait()
        with paused_gc():
            pass
        assert not gc.isenabled()  # the first task's section is still open
        second_out.set()

    await asyncio.gather(first(), second())
    assert gc.isenabled()


def test_cycles_made_inside_are_collected_after() -> None:
    class Node:
        def __init__(self) -> None:
            self.other: Node | None = None

    with paused_gc():
        a, b = Node(), Node()
        a.other, b.other = b, a
        refs = [weakref.ref(a), weakref.ref(b)]
        del a, b
        assert all(r() is not None for r in refs)  # a cycle: reference counting alone cannot free it
    gc.collect()
    assert all(r() is None for r in refs)
