"""Pieces of the ingest path made cheaper in issue 15: batch ids and event sizes."""

from __future__ import annotations

import uuid

from elephantasm.ids import new_batch
from elephantasm.schemas.events import EventCreate
from elephantasm.services.event_copy import meta_json
from elephantasm.services.events import event_size


def test_batch_ids_are_distinct_time_ordered_uuids() -> None:
    ids = new_batch(5000)
    assert len(set(ids)) == 5000
    assert ids == sorted(ids)  # version 7: appended to the right edge of events_pkey
    for i in ids:
        assert isinstance(i, uuid.UUID)
        parsed = uuid.UUID(str(i))
        assert (parsed.version, parsed.variant) == (7, uuid.RFC_4122)
    assert new_batch(0) == []


def test_event_size_counts_the_stored_utf8_bytes_of_meta() -> None:
    meta = {"city": "Zürich", "n": 1, "tags": ["ü", "x"]}
    data = EventCreate(anima_id=uuid.uuid4(), event_type="message.in", content="héllo", summary="ok", meta=meta)
    assert event_size(data) == len("héllo".encode()) + 2 + len(meta_json(meta).encode())
    assert meta_json(meta) == '{"city":"Zürich","n":1,"tags":["ü","x"]}'  # compact, ü as 2 bytes, not \u00fc
