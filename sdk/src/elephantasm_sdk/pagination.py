"""Auto-paginating iterators over cursor-paged list endpoints."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Generic, TypeVar

from ._core.pagination import Page, next_page
from ._core.request import Operation

T = TypeVar("T")

__all__ = ["AsyncPager", "Page", "SyncPager"]


class SyncPager(Generic[T]):
    """Iterates every item of every page, fetching pages lazily as iteration reaches them.

    Example:
        >>> for event in client.events.list(anima_id, limit=100):
        ...     print(event.content)
    """

    def __init__(self, fetch: Callable[[Operation[Page[T]]], Page[T]], first: Operation[Page[T]]) -> None:
        self._fetch = fetch
        self._first = first

    def first_page(self) -> Page[T]:
        """Fetch only the first page."""
        return self._fetch(self._first)

    def iter_pages(self) -> Iterator[Page[T]]:
        """Yield each page in turn until the server reports no ``next_cursor``."""
        op: Operation[Page[T]] | None = self._first
        while op is not None:
            page = self._fetch(op)
            yield page
            op = next_page(op, page)

    def __iter__(self) -> Iterator[T]:
        for page in self.iter_pages():
            yield from page.items

    def to_list(self) -> list[T]:
        """Fetch every page and return all items."""
        return list(self)


class AsyncPager(Generic[T]):
    """Async counterpart of :class:`SyncPager`; use ``async for``.

    Example:
        >>> async for event in client.events.list(anima_id, limit=100):
        ...     print(event.content)
    """

    def __init__(self, fetch: Callable[[Operation[Page[T]]], Awaitable[Page[T]]], first: Operation[Page[T]]) -> None:
        self._fetch = fetch
        self._first = first

    async def first_page(self) -> Page[T]:
        """Fetch only the first page."""
        return await self._fetch(self._first)

    async def iter_pages(self) -> AsyncIterator[Page[T]]:
        """Yield each page in turn until the server reports no ``next_cursor``."""
        op: Operation[Page[T]] | None = self._first
        while op is not None:
            page = await self._fetch(op)
            yield page
            op = next_page(op, page)

    async def __aiter__(self) -> AsyncIterator[T]:
        async for page in self.iter_pages():
            for item in page.items:
                yield item

    async def to_list(self) -> list[T]:
        """Fetch every page and return all items."""
        return [item async for item in self]
