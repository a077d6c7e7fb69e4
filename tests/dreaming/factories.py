"""Event builders shared by the dreaming tests."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from elephantasm.domain.dreaming import EventInput

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


def ev(
    index: int,
    content: str,
    *,
    minutes: float | None = None,
    session: str | None = "s1",
    inbound: bool | None = None,
    **extra: object,
) -> EventInput:
    """An event; by default alternating user/assistant messages one minute apart."""
    inbound = index % 2 == 0 if inbound is None else inbound
    return EventInput(
        index=index,
        id=uuid.UUID(int=index + 1),
        event_type="message.in" if inbound else "message.out",
        role="user" if inbound else "assistant",
        content=content,
        occurred_at=T0 + timedelta(minutes=index if minutes is None else minutes),
        session_id=session,
        **extra,  # type: ignore[arg-type]
    )


def conversation(texts: list[str], session: str | None = "s1", start: int = 0) -> list[EventInput]:
    """Alternating user/assistant turns, one minute apart."""
    return [ev(start + i, t, session=session) for i, t in enumerate(texts)]
