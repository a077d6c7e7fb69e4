"""The inspector's chat conversation read back from what its turns recorded: the chat events of
one session, grouped by the generation that answered them, each reply with its KV outcome. The
page after a turn is a plain GET of this (POST-redirect-GET), so a reload sends nothing again."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from elephantasm.db.models import GenerationRow
from elephantasm.services.events import EventFilter, list_events

MAX_CHAT_EVENTS = 1000


async def chat_turns(
    session: AsyncSession, org_id: uuid.UUID, anima_id: uuid.UUID, session_id: str
) -> list[dict[str, Any]]:
    """``[{"role", "content", "kv"}]`` of the chat in ``session_id``, oldest turn first (user before
    its reply); ``kv`` is the reply's recorded KV outcome (None on user turns)."""
    flt = EventFilter(anima_id=anima_id, session_id=session_id)
    events, _ = await list_events(session, org_id, flt, MAX_CHAT_EVENTS, None)
    by_generation: dict[uuid.UUID, list[Any]] = {}
    for event in events:
        meta = event.meta or {}
        if meta.get("source") == "chat" and meta.get("generation_id"):
            by_generation.setdefault(uuid.UUID(meta["generation_id"]), []).append(event)
    stmt = select(col(GenerationRow.id), col(GenerationRow.kv_status)).where(
        col(GenerationRow.org_id) == org_id, col(GenerationRow.id).in_(list(by_generation))
    )
    outcome: dict[uuid.UUID, str] = {gid: status for gid, status in (await session.execute(stmt)).all()}
    return [
        {"role": e.role, "content": e.content, "kv": outcome.get(gid) if e.role == "assistant" else None}
        for gid, turn in by_generation.items()
        for e in sorted(turn, key=lambda e: e.role != "user")
    ]
