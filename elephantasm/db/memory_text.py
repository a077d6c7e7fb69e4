"""A memory's ``content`` as every reader must see it: stored, or rendered from its events.

A memory whose content is exactly the ``"speaker: text"`` lines of its events
(what the offline engine writes) stores NULL and ``content_rendered``; the SQL function
``memory_text(anima_id, event_ids)`` renders it. Reading ``memories.content`` directly gives NULL
for those rows: read :func:`memory_content`.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import case, func


def memory_content(table: Any) -> Any:
    """The content of a row of ``table`` (the memories table or an alias of it), labelled ``content``."""
    c = table.c
    rendered = func.memory_text(c.anima_id, c.event_ids)
    return case((c.content_rendered, rendered), else_=c.content).label("content")
