"""Running a chat turn in a worker thread while its text streams to the event loop.

The worker reports ``ready`` (with the KV status) once the prompt is in the cache, then each new
piece of text, then ``done``; the caller can send response headers as soon as ``ready`` arrives.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from elephantasm.services.kv.chat import ChatPlan, finish_chat, run_chat

if TYPE_CHECKING:
    from elephantasm.local.engine import Generated, LocalEngine
    from elephantasm.runtime import Runtime


class ChatStream:
    """One streamed chat turn."""

    def __init__(self, runtime: Runtime, engine: LocalEngine, plan: ChatPlan) -> None:
        self.runtime, self.engine, self.plan = runtime, engine, plan
        self._queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self._task: asyncio.Future[None] | None = None
        self.generated: Generated | None = None

    async def start(self) -> str:
        """Start the model; returns the KV status (``hit``/``miss``/``off``) once the prompt is in."""
        loop = asyncio.get_running_loop()

        def put(kind: str, value: Any) -> None:
            loop.call_soon_threadsafe(self._queue.put_nowait, (kind, value))

        def work() -> None:
            try:
                keep = self.runtime.settings.local_kv_snapshots
                result = run_chat(self.engine, self.plan, keep, lambda s: put("ready", s), lambda t: put("text", t))
                put("done", result)
            except BaseException as exc:
                put("error", exc)

        self._task = asyncio.ensure_future(asyncio.to_thread(work))
        kind, value = await self._queue.get()
        if kind == "error":
            raise value
        return value

    async def pieces(self) -> AsyncIterator[str]:
        """The generated text as it comes; records the turn when generation ends."""
        while True:
            kind, value = await self._queue.get()
            if kind == "text":
                yield value
            elif kind == "error":
                raise value
            elif kind == "done":
                primed, self.generated = value
                await finish_chat(self.runtime, self.engine, self.plan, primed, self.generated)
                return
