"""Logging without user content: tracebacks keep their frames and exception types, never messages.

Exception messages routinely quote the data that caused them (a driver error echoes the bound
parameters, a parse error the offending text), and logs outlive the data's deletion, so the
service logs where and what kind of failure happened, not the message.
"""

from __future__ import annotations

import traceback


def safe_traceback(exc: BaseException) -> str:
    """``exc``'s traceback (with its causes) where each exception is named by its type only."""
    parts: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        frames = "".join(traceback.format_tb(current.__traceback__))
        name = f"{type(current).__module__}.{type(current).__qualname__}"
        parts.append(f"Traceback (most recent call last):\n{frames}{name} (message withheld: it may quote user data)")
        current = current.__cause__ or current.__context__
    return "\n\nwhich was raised while handling or caused by:\n\n".join(parts)
