"""The dream journal's storage shape: entries batched into rows, and rows expanded back into entries.

A step of a dream run journals ~100 similar entries at once (one per memory it created, say). Stored
one row per entry, each paid ~130 bytes of its own id, org, anima, run, labels and timestamp and a
pkey entry: 34 KB per conversation. So a row holds a run of consecutive entries of
one step with the same action and target type: their target ids as ``uuid[]`` and their before/after
values as jsonb arrays (NULL when every entry's is None), compressed together inline.

An entry's id is derived from its row's id and its position (the low 16 bits; rows are time-ordered
UUIDv7s whose counter sits above those bits), so ids stay unique and stable and sort in the order the
entries were written.

Pure: no I/O.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

POSITION_BITS = 16
MAX_ENTRIES = 1 << POSITION_BITS
"""Entries one row can hold: their positions fill the low bits of the row id."""


@dataclass(frozen=True)
class JournalEntry:
    """One journal entry as readers see it (the wire's ``DreamActionRead``)."""

    id: uuid.UUID
    action: str
    target_type: str
    target_id: uuid.UUID | None
    before: Any
    after: Any
    created_at: datetime


def entry_id(row_id: uuid.UUID, position: int) -> uuid.UUID:
    """The id of the entry at ``position`` of the row ``row_id``."""
    return uuid.UUID(int=(row_id.int >> POSITION_BITS << POSITION_BITS) | position)


def _values(entries: Sequence[dict[str, Any]], key: str) -> list[Any] | None:
    values = [e[key] for e in entries]
    return None if all(v is None for v in values) else values


def _groups(entries: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Entries in runs that keep the readers' order, (action, id): a row is closed when another
    target type writes the same action, so the rows of one action never interleave."""
    groups: list[list[dict[str, Any]]] = []
    open_by_action: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        group = open_by_action.get(entry["action"])
        if group is None or group[0]["target_type"] != entry["target_type"] or len(group) == MAX_ENTRIES:
            group = []
            groups.append(group)
            open_by_action[entry["action"]] = group
        group.append(entry)
    return groups


def batch_rows(
    entries: Sequence[dict[str, Any]], new_ids: Callable[[int], Sequence[uuid.UUID]], base: dict[str, Any]
) -> list[dict[str, Any]]:
    """The dream_actions rows holding ``entries`` (dicts of action, target_type, target_id, before,
    after, in the order they were written); ``base`` holds the step's columns (org, anima, run,
    created_at) and ``new_ids(n)`` gives n increasing row ids."""
    groups = _groups(entries)
    ids = new_ids(len(groups))
    return [
        {
            **base,
            "id": row_id,
            "action": group[0]["action"],
            "target_type": group[0]["target_type"],
            "target_ids": [e["target_id"] for e in group],
            "befores": _values(group, "before"),
            "afters": _values(group, "after"),
        }
        for row_id, group in zip(ids, groups, strict=True)
    ]


def expand(row: Any) -> list[JournalEntry]:
    """The entries of one dream_actions row, in the order they were written."""
    n = len(row.target_ids)
    befores = row.befores if row.befores is not None else [None] * n
    afters = row.afters if row.afters is not None else [None] * n
    return [
        JournalEntry(
            entry_id(row.id, i), row.action, row.target_type, row.target_ids[i], befores[i], afters[i], row.created_at
        )
        for i in range(n)
    ]
