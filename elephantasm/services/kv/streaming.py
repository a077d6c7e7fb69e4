"""Running a chat turn in a worker thread while its text streams to the event loop.

The worker reports ``ready`` (with how the prompt got into the KV cache) once the prompt is in,
then each new piece of text, then ``reply`` (the generation), then ``done`` once the reply is also
in the cache for the next turn; the caller can send response headers as soon as ``ready``
arrives. The turn is recorded (``finish``) on ``reply``, while the worker still runs, and the
stream ends after both, so a client that read to the end knows it is stored; if generation
fails, ``fail`` still stores what the user said before the error propagates.
A client that goes away mid-stream stops the generation at the next token; the turn is still
recorded (the user's message and the text generated so far, ``finish_reason`` ``cancelled``) by a
background task, so a dropped connection never loses what the user said.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncGenerator, Awaitable, Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from elephantasm.domain.errors import StorageFullError
from elephantasm.services.kv import snapshots
from elephantasm.services.kv.chat import ChatPlan, record_chat, record_failed, run_chat, warm_next_pack

if TYPE_CHECKING:
    from elephantasm.db.engine import SessionFactory
    from elephantasm.local.engine import Generated, LocalEngine
    from elephantasm.local.holder import LocalModels
    from elephantasm.services.kv.prefix import ChatPacks
    from elephantasm.services.kv.reuse import Primed

log = logging.getLogger(__name__)
# Finishing tasks of abandoned streams: held here so they are not garbage-collected mid-flight.
_FINISHING: set[asyncio.Task[None]] = set()

Finish = Callable[["Primed", "Generated"], Awaitable[None]]
Fail = Callable[[], Awaitable[None]]


class ChatStream:
    """One streamed chat turn: ``finish`` records a generated turn, ``fail`` one whose generation failed."""

    def __init__(self, engine: LocalEngine, plan: ChatPlan, reuse: bool, finish: Finish, fail: Fail) -> None:
        self.engine, self.plan, self.reuse = engine, plan, reuse
        self._record, self._record_failed = finish, fail
        self._queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self._task: asyncio.Future[None] | None = None
        self._cancel = threading.Event()
        self._finishing: asyncio.Task[None] | None = None
        self.generated: Generated | None = None

    async def start(self) -> Primed:
        """Start the model; returns how the prompt got into the KV cache once it is in."""
        loop = asyncio.get_running_loop()

        def put(kind: str, value: Any) -> None:
            loop.call_soon_threadsafe(self._queue.put_nowait, (kind, value))

        def work() -> None:
            try:
                run_chat(self.engine, self.plan, self.reuse, put, self._cancel.is_set)
                put("done", None)
            except BaseException as exc:
                put("error", exc)

        self._task = asyncio.ensure_future(asyncio.to_thread(work))
        kind, value = await self._queue.get()
        if kind == "error":
            await self._record_failed()
            raise value
        return value

    async def pieces(self) -> AsyncGenerator[str, None]:
        """The generated text as it comes; records the turn when generation ends.

        If the consumer stops early (closed or cancelled: the client disconnected), the model is
        told to stop and the turn is recorded in the background (see :meth:`finished`).
        """
        ended = False
        try:
            while True:
                try:
                    piece = await self._next()
                except BaseException:
                    ended = True
                    raise
                if piece is None:
                    ended = True
                    return
                yield piece
        finally:
            if not ended:
                self._cancel.set()
                self._finishing = asyncio.ensure_future(self._finish_abandoned())
                _FINISHING.add(self._finishing)
                self._finishing.add_done_callback(_FINISHING.discard)

    async def finished(self) -> None:
        """Wait until an abandoned stream's turn is recorded (no-op if the stream ran to its end)."""
        if self._finishing is not None:
            await asyncio.shield(self._finishing)

    async def _next(self) -> str | None:
        """The next piece of text, None once the worker is done; records the turn on ``reply``, and
        on an error stores the user's turn (unless the reply was recorded) before raising it."""
        while True:
            kind, value = await self._queue.get()
            if kind == "text":
                return str(value)
            if kind == "done":
                return None
            if kind == "reply":
                primed, self.generated = value
                await self._record(primed, self.generated)
            elif kind == "error":
                if self.generated is None:
                    await self._record_failed()
                raise value

    async def _finish_abandoned(self) -> None:
        try:
            while await self._next() is not None:
                pass
        except Exception as exc:  # nobody awaits this task: say what went wrong, once
            log.warning("chat turn of an abandoned stream ended with an error (%s)", type(exc).__name__)


def chat_stream(
    unit_of_work: SessionFactory,
    models: LocalModels,
    packs: ChatPacks,
    clock: Callable[[], datetime],
    engine: LocalEngine,
    plan: ChatPlan,
) -> ChatStream:
    """The turn's model work, recorded after the reply: the turn first (what the client sent must
    not be lost to a later failure; the user's message alone if generation fails), then the pack
    compile's record and the new snapshot (file, row), each in a unit of work of its own, and the
    next turn's pack."""

    async def after_reply(primed: Primed | None) -> None:
        if plan.followup is not None:
            await plan.followup()
        if primed is not None:
            try:
                async with unit_of_work() as session:
                    await snapshots.settle(session, models, clock(), engine, plan.snapshot_of, primed, plan.snapshot)
            except StorageFullError as exc:  # the snapshot is a cache: the turn is answered and recorded
                log.warning("KV snapshot not kept: %s", exc.detail)

    async def finish(primed: Primed, gen: Generated) -> None:
        async with unit_of_work() as session:
            await record_chat(session, engine, plan, primed, gen, clock())
        await after_reply(primed)
        await warm_next_pack(packs, plan)

    async def fail() -> None:
        async with unit_of_work() as session:
            await record_failed(session, plan, clock())
        await after_reply(None)

    return ChatStream(engine, plan, models.reuse, finish, fail)
