"""Cursor pagination over ``{"items": [...], "next_cursor": ...}`` pages. Pure functions."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Generic, TypeVar

from pydantic import BaseModel

from .request import Operation, RawResponse
from .response import items_of

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of results and the cursor of the next one (None on the last page)."""

    items: list[T]
    next_cursor: str | None = None


def parse_page(model: type[M]) -> Callable[[RawResponse], Page[M]]:
    """Parser for one page of ``model``; a bare list is a single, final page."""

    def parse(raw: RawResponse) -> Page[M]:
        body = raw.json()
        cursor = body.get("next_cursor") if isinstance(body, dict) else None
        items = [model.model_validate(item) for item in items_of(body)]
        return Page(items=items, next_cursor=str(cursor) if cursor not in (None, "") else None)

    return parse


def next_page(op: Operation[Page[T]], page: Page[T]) -> Operation[Page[T]] | None:
    """The operation fetching the page after ``page``, or None when there is no more.

    Stops on a missing cursor, an empty page, or a cursor that repeats the current one (a server
    bug that would otherwise loop forever).
    """
    cursor = page.next_cursor
    if not cursor or not page.items or op.request.params.get("cursor") == cursor:
        return None
    params = {**op.request.params, "cursor": cursor}
    return replace(op, request=replace(op.request, params=params))
