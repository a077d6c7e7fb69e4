"""Base classes binding a resource to its client's transport."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from .._core.pagination import Page
from .._core.request import Operation, require_anima_id
from ..pagination import AsyncPager, SyncPager

if TYPE_CHECKING:
    from .._async_client import AsyncElephantasm
    from .._client import Elephantasm

T = TypeVar("T")


class SyncResource:
    """A group of endpoints used through a sync :class:`~elephantasm_sdk.Elephantasm` client."""

    def __init__(self, client: Elephantasm) -> None:
        self._client = client

    def _run(self, op: Operation[T], timeout: float | None = None) -> T:
        return self._client._execute(op, timeout)

    def _pager(self, op: Operation[Page[T]], timeout: float | None = None) -> SyncPager[T]:
        return SyncPager(lambda o: self._run(o, timeout), op)

    def _anima(self, anima_id: Any) -> str:
        return require_anima_id(anima_id, self._client.anima_id)


class AsyncResource:
    """A group of endpoints used through an :class:`~elephantasm_sdk.AsyncElephantasm` client."""

    def __init__(self, client: AsyncElephantasm) -> None:
        self._client = client

    async def _run(self, op: Operation[T], timeout: float | None = None) -> T:
        return await self._client._execute(op, timeout)

    def _pager(self, op: Operation[Page[T]], timeout: float | None = None) -> AsyncPager[T]:
        return AsyncPager(lambda o: self._run(o, timeout), op)

    def _anima(self, anima_id: Any) -> str:
        return require_anima_id(anima_id, self._client.anima_id)
