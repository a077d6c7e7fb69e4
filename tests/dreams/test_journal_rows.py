"""The journal's batched storage shape (services/dreams/journal.py): a step's entries go into
rows of one action and target type and expand back to the same entries, in the order the readers
give (created_at, action, id), with unique ids."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

from elephantasm.ids import new_batch
from elephantasm.services.dreams import journal as journal_rows
from elephantasm.services.dreams.journal import MAX_ENTRIES, batch_rows, entry_id, expand

NOW = datetime(2026, 5, 1, tzinfo=UTC)
BASE = {"org_id": uuid.uuid4(), "anima_id": uuid.uuid4(), "run_id": uuid.uuid4(), "created_at": NOW}


def _entry(action: str, kind: str, before: Any = None, after: Any = None) -> dict[str, Any]:
    return {"action": action, "target_type": kind, "target_id": uuid.uuid4(), "before": before, "after": after}


def _read(rows: list[dict[str, Any]]) -> list[journal_rows.JournalEntry]:
    """Entries as run_actions returns them: rows ordered by (created_at, action, id), then expanded."""
    ordered = sorted(rows, key=lambda r: (r["created_at"], r["action"], r["id"]))
    return [e for r in ordered for e in expand(SimpleNamespace(**r))]


def test_rows_expand_to_the_entries_in_action_then_written_order() -> None:
    entries = [
        _entry("created", "memory", after={"events": 1}),
        _entry("archived", "memory", {"state": "active"}, {"state": "archived"}),
        _entry("created", "memory", after={"events": 2}),
        _entry("created", "knowledge", after={"content": "x"}),
        _entry("created", "memory", after={"events": 3}),  # the same action's types interleave: a new row
        _entry("updated", "identity", None, {"version": 1}),
    ]
    rows = batch_rows(entries, new_batch, BASE)
    assert [(r["action"], r["target_type"], len(r["target_ids"])) for r in rows] == [
        ("created", "memory", 2), ("archived", "memory", 1), ("created", "knowledge", 1),
        ("created", "memory", 1), ("updated", "identity", 1)]  # fmt: skip
    assert rows[0]["befores"] is None and rows[1]["befores"] == [{"state": "active"}]
    got = _read(rows)
    indexed = sorted(range(len(entries)), key=lambda i: (entries[i]["action"], i))
    assert [(e.action, e.target_type, e.target_id, e.before, e.after) for e in got] == [
        tuple(entries[i][k] for k in ("action", "target_type", "target_id", "before", "after")) for i in indexed
    ]
    assert all(e.created_at == NOW for e in got)
    # Ids are unique and sort as the entries read (the old per-entry order was by id within an action).
    assert len({e.id for e in got}) == len(got)
    for action in {e.action for e in got}:
        ids = [e.id for e in got if e.action == action]
        assert ids == sorted(ids)


def test_ids_are_stable_and_later_steps_sort_after_earlier_ones() -> None:
    first = batch_rows([_entry("created", "memory") for _ in range(3)], new_batch, BASE)
    second = batch_rows([_entry("created", "memory") for _ in range(2)], new_batch, BASE)
    a, b = _read(first), _read(second)
    assert [e.id for e in _read(first)] == [e.id for e in a]  # derived, not drawn
    assert max(e.id for e in a) < min(e.id for e in b)
    assert [e.id for e in a] == [entry_id(first[0]["id"], i) for i in range(3)]


def test_a_row_holds_at_most_max_entries() -> None:
    entries = [{"action": "decaying", "target_type": "memory", "target_id": None, "before": None, "after": None}]
    rows = batch_rows(entries * (MAX_ENTRIES + 1), new_batch, BASE)
    assert [len(r["target_ids"]) for r in rows] == [MAX_ENTRIES, 1]
    ids = [e.id for e in _read(rows)]
    assert len(set(ids)) == len(ids) == MAX_ENTRIES + 1 and ids == sorted(ids)


def test_no_entries_no_rows() -> None:
    assert batch_rows([], new_batch, BASE) == []
