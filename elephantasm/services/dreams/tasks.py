"""Background dream runs owned by a process: kept referenced while they run, cancelled at shutdown."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

from elephantasm.services.dreams.liveness import RunLocks

log = logging.getLogger(__name__)


class DreamTasks:
    """A set of asyncio tasks (manual triggers, scheduler runs) that the process drains on close.

    A cancelled run records itself as failed and releases its claims (see ``runner.execute_run``);
    a process killed outright is recovered by the next run through the heartbeat timeout.
    """

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()
        self.run_locks = RunLocks()
        """The liveness locks of the runs this process executes (``liveness.py``)."""

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str | None = None) -> asyncio.Task[Any]:
        """Run ``coro`` in the background, keeping a strong reference until it ends."""
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background dream task %s failed", task.get_name(), exc_info=task.exception())

    async def close(self, timeout: float = 10.0) -> None:
        """Cancel what is still running and wait (bounded) for it to record its end."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)
        await self.run_locks.close()
