"""Pure checks on untrusted input: JSON depth and size, NUL characters, the window of sane instants.

Every walk here is iterative, so a value nested a thousand levels deep cannot exhaust the stack
of the process that inspects it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
from pydantic import ValidationError as PydanticValidationError

_encode = msgspec.json.Encoder().encode

EARLIEST_INSTANT = datetime(1900, 1, 1, tzinfo=UTC)
"""No instant the service accepts lies before this (documented in the README)."""
LATEST_INSTANT = datetime(3000, 1, 1, tzinfo=UTC)
"""Nor at or after this: far from the end of what Python and Postgres can represent in any offset."""
OCCURRED_AT_LEEWAY = timedelta(days=1)
"""``occurred_at`` may lie at most this far after the server's clock (clock skew, time zones)."""

READ_DEPTH_CEILING = 64
"""JSON nested deeper than this is never served (``max_json_depth`` may not exceed it)."""


def json_depth(value: Any, stop_after: int) -> int:
    """Nesting depth of a JSON value (a scalar is 0, ``{}`` is 1); counting stops past ``stop_after``."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        depth += 1
        deepest = max(deepest, depth)
        if deepest > stop_after:
            return deepest
        stack.extend((child, depth) for child in children)
    return deepest


def json_problem(value: Any, max_depth: int, max_bytes: int) -> str | None:
    """Why ``value`` breaks the limits (naming the setting), or None when it is fine."""
    depth = json_depth(value, max_depth)
    if depth > max_depth:
        return f"nests deeper than {max_depth} levels; the limit is max_json_depth={max_depth}"
    size = len(_encode(value))  # as msgspec writes it for storage; the depth is bounded by now
    if size > max_bytes:
        return f"is {size} bytes as JSON; the limit is max_json_bytes={max_bytes}"
    return None


def nul_path(value: Any) -> str | None:
    """The path (``""``, ``.key``, ``[3]``…) of the first string or key holding a NUL, or None.

    Postgres can store NUL in neither ``text`` nor ``jsonb``, so such input can only be refused.
    """
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return path
        elif isinstance(item, dict):
            for key, child in item.items():
                if isinstance(key, str) and "\x00" in key:
                    return f"{path}.{key!r}"
                stack.append((child, f"{path}.{key}"))
        elif isinstance(item, list | tuple):
            stack.extend((child, f"{path}[{i}]") for i, child in enumerate(item))
    return None


def instant_problem(value: datetime) -> str | None:
    """Why an instant is unacceptable (naive, or outside the sane window), or None."""
    if value.tzinfo is None or value.utcoffset() is None:
        return "must carry a timezone offset (e.g. 2026-01-01T12:00:00Z)"
    if not EARLIEST_INSTANT <= value < LATEST_INSTANT:
        return f"must lie between {EARLIEST_INSTANT:%Y-%m-%d} and {LATEST_INSTANT:%Y-%m-%d} (UTC)"
    return None


def schema_problems(exc: PydanticValidationError) -> str:
    """A schema error as one line: ``field.path: message`` per problem, no pydantic banner, no input
    echoed (what a client reads in ``detail``)."""
    return "; ".join(
        f"{'.'.join(str(part) for part in err['loc']) or 'value'}: {err['msg'].removeprefix('Value error, ')}"
        for err in exc.errors(include_url=False, include_input=False)
    )


def parse_iso_instant(value: object) -> datetime:
    """An ISO 8601 date-time string as a datetime (ValueError otherwise: a number, a date alone…);
    whether it is aware and in the window is :func:`instant_problem`'s to say."""
    if isinstance(value, str) and len(value) <= 64:  # no ISO instant is longer
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            pass
    raise ValueError("must be an ISO 8601 date-time string with a timezone offset (e.g. 2026-01-01T12:00:00Z)")


def occurred_at_problem(value: datetime, now: datetime) -> str | None:
    """Why an event's ``occurred_at`` is unacceptable: outside 1900-01-01 … now + 1 day."""
    problem = instant_problem(value)
    if problem is None and value > now + OCCURRED_AT_LEEWAY:
        return f"lies more than {OCCURRED_AT_LEEWAY.days} day after the server's clock ({now:%Y-%m-%dT%H:%M:%SZ})"
    return problem
