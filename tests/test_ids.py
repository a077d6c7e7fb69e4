"""Time-ordered row ids (elephantasm.ids): RFC 9562 version 7 layout, monotonic in the process."""

from __future__ import annotations

import time
import uuid

import pytest

from elephantasm import ids


def _ms(u: uuid.UUID) -> int:
    return u.int >> 80


def test_layout_is_version_7_with_the_current_millisecond() -> None:
    before = time.time_ns() // 1_000_000
    u = ids.uuid7()
    after = time.time_ns() // 1_000_000
    assert u.version == 7 and u.variant == uuid.RFC_4122
    assert before <= _ms(u) <= after + 1  # +1: an id may borrow the next millisecond


def test_ids_increase_in_the_order_made_within_and_across_batches() -> None:
    made = [ids.uuid7() for _ in range(2000)] + ids.new_batch(3000) + [ids.uuid7()]
    assert made == sorted(made)
    assert len(set(made)) == len(made)
    # Postgres compares uuids bytewise: the same order.
    assert [u.bytes for u in made] == sorted(u.bytes for u in made)


def test_batch_is_the_drivers_uuid_type_and_equal_to_plain_uuids() -> None:
    batch = ids.new_batch(3)
    assert all(isinstance(u, uuid.UUID) and u.version == 7 for u in batch)
    assert [uuid.UUID(str(u)) for u in batch] == batch
    assert ids.new_batch(0) == []


def test_a_clock_going_back_never_breaks_the_order(monkeypatch: pytest.MonkeyPatch) -> None:
    first = ids.uuid7()
    monkeypatch.setattr(ids.time, "time_ns", lambda: 0)
    later = ids.new_batch(5)
    assert [first, *later] == sorted([first, *later])
    assert all(_ms(u) == _ms(first) for u in later)


def test_counter_overflow_borrows_the_next_millisecond(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ids, "_fresh_counter", lambda: ids._COUNTER_MAX - 1)
    monkeypatch.setattr(ids.time, "time_ns", lambda: (ids._last_ms + 10) * 1_000_000)
    a, b, c = ids.new_batch(3)
    assert a < b < c
    assert _ms(b) == _ms(a) and _ms(c) == _ms(a) + 1
