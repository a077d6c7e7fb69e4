"""Run one step while a request is held at a known point (no sleeps: the request signals it got there)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any


async def while_paused(
    task: asyncio.Future[Any],
    reached: asyncio.Event,
    where: str,
    step: Callable[[], Awaitable[None]],
    release: Callable[[], None],
) -> None:
    """Wait until ``task`` sets ``reached`` (``where`` says what that means; fails if the task ends first),
    run ``step``, then ``release`` the task, always, so a failing step never leaves it blocked."""
    try:
        await asyncio.wait([task, asyncio.ensure_future(reached.wait())], return_when=asyncio.FIRST_COMPLETED)
        assert reached.is_set(), where
        await step()
    finally:
        release()
