"""The asynchronous client."""

from __future__ import annotations

import asyncio
import random
from datetime import datetime
from typing import Any, TypeVar
from uuid import UUID

import httpx

from ._client_base import ClientBase, to_raw
from ._core.attempt import after_attempt
from ._core.request import Operation, RawResponse, RequestSpec
from ._core.retry import RetryPolicy
from .models import Anima, Event, EventType, MemoryPack
from .resources import (
    AsyncAnimas,
    AsyncDreams,
    AsyncEvents,
    AsyncIdentityResource,
    AsyncKeys,
    AsyncKnowledgeResource,
    AsyncMemories,
    AsyncPacks,
)

T = TypeVar("T")


class AsyncElephantasm(ClientBase):
    """HTTP client for the Elephantasm API (asyncio).

    Example:
        >>> from elephantasm_sdk import AsyncElephantasm, EventType
        >>> async with AsyncElephantasm(api_key="sk_live_...", anima_id="...") as client:
        ...     await client.extract(EventType.MESSAGE_IN, "Hello!", role="user")
        ...     pack = await client.inject()
    """

    def __init__(
        self,
        api_key: str | None = None,
        anima_id: str | None = None,
        endpoint: str | None = None,
        timeout: float | None = None,
        *,
        max_retries: int | None = None,
        retry: RetryPolicy | None = None,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        """Create a client; arguments as for :class:`~elephantasm_sdk.Elephantasm`
        (``http_client`` is an ``httpx.AsyncClient``)."""
        super().__init__(api_key, anima_id, endpoint, timeout, max_retries=max_retries, retry=retry)
        self._owns_http = http_client is None
        self._http = http_client or httpx.AsyncClient(timeout=self._options.timeout)
        self._bind_resources()

    def _bind_resources(self) -> None:
        self.animas = AsyncAnimas(self)
        self.events = AsyncEvents(self)
        self.packs = AsyncPacks(self)
        self.memories = AsyncMemories(self)
        self.knowledge = AsyncKnowledgeResource(self)
        self.identity = AsyncIdentityResource(self)
        self.dreams = AsyncDreams(self)
        self.keys = AsyncKeys(self)

    async def _send(self, spec: RequestSpec, timeout: float | None) -> tuple[RawResponse | None, BaseException | None]:
        try:
            return to_raw(await self._http.request(**self._request_kwargs(spec, timeout))), None
        except httpx.TransportError as exc:
            return None, exc

    async def _execute(self, op: Operation[T], timeout: float | None = None) -> T:
        """Send ``op`` with retries as the policy decides; parse or raise."""
        attempt = 0
        while True:
            raw, exc = await self._send(op.request, timeout)
            step = after_attempt(self._options.retry, attempt, rand=random.random(), raw=raw, exc=exc)
            if step.retry_in is not None:
                await asyncio.sleep(step.retry_in)
                attempt += 1
                continue
            if step.error is not None:
                raise step.error from exc
            assert raw is not None
            return op.parse(raw)

    def with_options(
        self, *, timeout: float | None = None, max_retries: int | None = None, anima_id: str | None = None
    ) -> AsyncElephantasm:
        """A client with other defaults that shares this one's connections."""
        return self._derive(timeout=timeout, max_retries=max_retries, anima_id=anima_id)

    # --- the 0.2.0 surface, async ------------------------------------------------------------

    async def create_anima(
        self, name: str, description: str | None = None, meta: dict[str, Any] | None = None
    ) -> Anima:
        """Create a new anima (agent entity). Same as ``animas.create``."""
        return await self.animas.create(name, description, meta)

    async def inject(
        self,
        anima_id: str | UUID | None = None,
        query: str | None = None,
        preset: str | None = None,
        max_tokens: int | None = None,
        encoding: str | None = None,
        *,
        conditional: bool = True,
        timeout: float | None = None,
    ) -> MemoryPack | None:
        """The latest memory pack for context injection, or None. Same as ``packs.inject``."""
        return await self.packs.inject(
            anima_id, query, preset, max_tokens, encoding, conditional=conditional, timeout=timeout
        )

    async def extract(
        self,
        event_type: str | EventType,
        content: str,
        anima_id: str | UUID | None = None,
        session_id: str | None = None,
        role: str | None = None,
        author: str | None = None,
        occurred_at: datetime | None = None,
        meta: dict[str, Any] | None = None,
        importance_score: float | None = None,
        *,
        summary: str | None = None,
        source_uri: str | None = None,
        dedupe_key: str | None = None,
        timeout: float | None = None,
    ) -> Event:
        """Capture an event (message, tool call, ...). Same as ``events.extract``."""
        return await self.events.extract(
            event_type, content, anima_id, session_id, role, author, occurred_at, meta, importance_score,
            summary=summary, source_uri=source_uri, dedupe_key=dedupe_key, timeout=timeout,
        )  # fmt: skip

    async def close(self) -> None:
        """Close the connection pool (unless it was passed in or shared by ``with_options``)."""
        if self._owns_http:
            await self._http.aclose()

    aclose = close

    async def __aenter__(self) -> AsyncElephantasm:
        return self

    async def __aexit__(self, *args: Any) -> None:
        await self.close()
