"""Batched extract by COPY: stage the batch in a temp table, then one ``INSERT … SELECT`` dedupes it.

In the caller's transaction: lock the batch's animas (sorted: concurrent batches cannot deadlock),
binary ``COPY`` the rows into a per-connection temp table, then one statement inserts them in request
order with ``ON CONFLICT DO NOTHING``, numbering them from each anima's ``event_seq``, and bumps each
anima once. Stored duplicates are looked up only when there are some. The statements are the same
for every batch size, so they stay prepared. Also the SQL the single-event path shares.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import msgspec
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from elephantasm.db import event_state, size_switches
from elephantasm.db.driver_fetch import fetch
from elephantasm.db.models import DEDUPE_KEYED, EVENT_META
from elephantasm.domain.errors import NotFoundError
from elephantasm.ids import new_batch
from elephantasm.schemas.event_batch import EventIn
from elephantasm.schemas.events import EventCreate

# The wire columns of an event, in EventRead's order.
_WIRE = (
    "id", "anima_id", "event_type", "role", "author", "summary", "content", "occurred_at", "session_id", "meta",
    "source_uri", "dedupe_key", "importance_score", "created_at", "updated_at",
)  # fmt: skip
RETURNED = ", ".join(c for c in _WIRE if c != "anima_id")
"""What an insert returns (the wire's stored columns, never ``RETURNING *``): an event row has no
``anima_id``, the statement adds it from the anima it inserted for."""


def stored_meta(alias: str) -> str:
    """SQL: the event's meta as jsonb text, ``{}`` for the NULL that stores it."""
    return f"{EVENT_META.read_sql(f'{alias}.meta')}::text"


def _columns(alias: str, anima: str) -> str:
    # As selected for the response: meta comes back as jsonb text (see wire.py), ``{}`` for the
    # NULL that stores it; the anima's id is the SQL expression ``anima``.
    named = {"meta": f"{stored_meta(alias)} AS meta", "anima_id": f"{anima} AS anima_id"}
    return ", ".join(named.get(c, f"{alias}.{c}") for c in _WIRE)


def new_row_columns(anima: str) -> str:
    """Of a row just inserted (``FROM ins``) for the anima whose id is the SQL expression ``anima``:
    not distilled yet."""
    return f"{_columns('ins', anima)}, NULL::timestamptz AS distilled_at"


def row_columns(anima: str) -> str:
    """Of a stored row (``FROM events e``) of the anima whose id is the SQL expression ``anima``."""
    return f"{_columns('e', anima)}, {event_state.distilled_at('e', anima)} AS distilled_at"


_RECORDED = _WIRE[: _WIRE.index("importance_score") + 1]  # the wire's columns a COPY record holds
_STAGED = ("ord", *_RECORDED)

# Session-lived (one per pooled connection, created on first use); emptied at every commit.
_STAGING_DDL = text("""
CREATE TEMP TABLE IF NOT EXISTS event_staging (
    ord int NOT NULL, id uuid NOT NULL, anima_id uuid NOT NULL, event_type text NOT NULL, role text,
    author text, summary text, content text NOT NULL, occurred_at timestamptz NOT NULL, session_id text,
    meta jsonb NOT NULL, source_uri text, dedupe_key text, importance_score float8
) ON COMMIT DELETE ROWS
""")
_CLEAR = text("DELETE FROM event_staging")  # normally empty: a no-op

_LOCK_ANIMAS = text("""
SELECT id, event_seq, events_indexed FROM animas
WHERE id = ANY(CAST(:ids AS uuid[])) AND org_id = :org AND deleted_at IS NULL
ORDER BY id FOR NO KEY UPDATE
""")
# After the insert, under the locks _LOCK_ANIMAS took: flips the animas this batch took over the
# threshold (the batch's own rows included: they were inserted by an earlier statement).

# Seqs continue each anima's event_seq in request order; the animas are locked (``_LOCK_ANIMAS``,
# an earlier statement), so this statement reads their latest event_seq. A duplicate leaves its seq
# unused (a gap, which nothing minds) and an anima with nothing inserted is not touched. The org is
# checked again here although the lock already did: no foreign key ties an event to an org.
_INSERT = text(f"""
WITH ins AS (
    INSERT INTO events (id, event_type, role, author, summary, content, occurred_at, session_id, meta,
                        source_uri, dedupe_key, importance_score, created_at, seq, anima_key, {size_switches.EVENT_FLAG})
    SELECT s.id, s.event_type::event_type, s.role, s.author, s.summary, s.content, s.occurred_at,
           s.session_id, {EVENT_META.store_sql("s.meta")}, s.source_uri, s.dedupe_key, s.importance_score, :now,
           a.event_seq + row_number() OVER (PARTITION BY s.anima_id ORDER BY s.ord), a.key,
           {size_switches.event_row_flag("a")}
    FROM event_staging s JOIN animas a ON a.id = s.anima_id AND a.org_id = :org ORDER BY s.ord
    ON CONFLICT (anima_key, dedupe_key) WHERE {DEDUPE_KEYED} DO NOTHING
    RETURNING id, anima_key, occurred_at, meta, seq
), bump AS (
    UPDATE animas a SET state_version = a.state_version + 1, event_seq = x.top,
           last_event_at = greatest(coalesce(a.last_event_at, x.at), x.at)
    FROM (SELECT anima_key, max(occurred_at) AS at, max(seq) AS top FROM ins GROUP BY anima_key) x
    WHERE a.key = x.anima_key
)
SELECT id, {stored_meta("ins")} AS meta FROM ins
""")

# A new statement sees rows committed meanwhile and this batch's own inserts (READ COMMITTED). The
# dedupe index is keyed by the anima's key, resolved here from the org's anima.
_EXISTING = text(f"""
SELECT {row_columns("a.id")}
FROM unnest(CAST(:animas AS uuid[]), CAST(:keys AS text[])) AS w(id, k)
JOIN animas a ON a.id = w.id AND a.org_id = :org
JOIN events e ON e.anima_key = a.key AND e.dedupe_key = w.k AND e.{DEDUPE_KEYED}
""")


_encode = msgspec.json.Encoder().encode


def meta_json(meta: dict[str, Any]) -> str:
    """``meta`` as JSON text: what the jsonb codec of the pool's connections takes."""
    return _encode(meta).decode()


@dataclass(frozen=True, slots=True)
class StoredRow:
    """One event of a batch as stored (``meta`` as JSON text), and whether this batch created it."""

    row: dict[str, Any]
    created: bool


def event_values(data: EventCreate | EventIn, now: datetime, meta: str | None = None) -> tuple[Any, ...]:
    """An event's own columns, ``anima_id`` to ``importance_score`` in table order (``meta`` as JSON
    text, ``meta`` when the caller has encoded it already): the part the batch COPY and the
    single-event insert share."""
    return (
        data.anima_id,
        data.event_type,
        data.role,
        data.author,
        data.summary,
        data.content,
        data.occurred_at or now,
        data.session_id,
        meta_json(data.meta) if meta is None else meta,
        data.source_uri,
        data.dedupe_key,
        data.importance_score,
    )


def _new_row(record: tuple[Any, ...], meta: str, stamps: tuple[datetime, datetime]) -> dict[str, Any]:
    """A row just inserted, as the database would return it (:func:`row_columns`), built from its COPY
    record (``ord`` then the wire's columns up to ``importance_score``): timestamps in UTC, ``meta``
    as Postgres's jsonb text, not distilled."""
    row = dict(zip(_RECORDED, record[1:], strict=True))
    row["created_at"], row["updated_at"] = stamps
    row["distilled_at"] = None
    row["meta"] = meta
    if row["occurred_at"].utcoffset():  # a client's offset; the database answers in UTC
        row["occurred_at"] = row["occurred_at"].astimezone(UTC)
    return row


async def _lock_animas(
    conn: AsyncConnection, org_id: uuid.UUID, events: Sequence[EventCreate | EventIn]
) -> list[uuid.UUID]:
    """Lock the batch's animas; those that this batch may take over ``size_switches.EVENT_THRESHOLD``."""
    wanted = Counter(e.anima_id for e in events)
    found = {r.id: r for r in await conn.execute(_LOCK_ANIMAS, {"ids": list(wanted), "org": org_id})}
    missing = sorted(str(a) for a in wanted.keys() - found.keys())
    if missing:
        raise NotFoundError(f"anima {missing[0]} not found")
    return [a for a, r in found.items() if not r.events_indexed and size_switches.events_large(r.event_seq + wanted[a])]


async def copy_events(
    conn: AsyncConnection,
    org_id: uuid.UUID,
    events: Sequence[EventCreate | EventIn],
    now: datetime,
    metas: Sequence[str] | None = None,
) -> list[StoredRow]:
    """Insert a batch inside the caller's transaction; the stored events in request order.

    An event whose ``dedupe_key`` already exists for its anima (or earlier in the batch) is not
    inserted: the stored one is returned with ``created=False``. A missing or foreign anima is a
    NotFoundError before anything is written; the caller's rollback undoes everything on error.
    ``metas``, when given, are the events' ``meta`` already encoded (:func:`meta_json`'s form).
    """
    if not events:
        return []
    crossing = await _lock_animas(conn, org_id, events)
    await conn.execute(_STAGING_DDL)
    await conn.execute(_CLEAR)  # an earlier batch in the same transaction (it is emptied at commit)
    driver = (await conn.get_raw_connection()).driver_connection
    assert driver is not None
    encoded: Sequence[str | None] = metas if metas is not None else [None] * len(events)
    records = [
        (i, id_, *event_values(e, now, m))
        for i, (id_, e, m) in enumerate(zip(new_batch(len(events)), events, encoded, strict=True))
    ]
    await driver.copy_records_to_table("event_staging", records=records, columns=_STAGED)
    # Only the ids and stored meta text of the inserted rows come back, straight from the driver:
    # the rest of a new row is what was just sent (_new_row).
    created = {r[0]: r[1] for r in await fetch(conn, _INSERT, {"now": now, "org": org_id})}
    if crossing:  # rare: once in an anima's life (the flip checks the threshold itself)
        await conn.execute(size_switches.EVENT_FLIP, {"ids": crossing})
    out: list[StoredRow | None] = [None] * len(records)
    dupes: list[int] = []
    stamps = (now.astimezone(UTC),) * 2
    for i, rec in enumerate(records):
        meta = created.get(rec[1])
        if meta is not None:
            out[i] = StoredRow(_new_row(rec, meta, stamps), True)
        else:
            dupes.append(i)
    if dupes:
        await _fill_existing(conn, org_id, events, dupes, out)
    return out  # type: ignore[return-value]  # every slot is filled or _fill_existing raised


async def _fill_existing(
    conn: AsyncConnection,
    org_id: uuid.UUID,
    events: Sequence[EventCreate | EventIn],
    dupes: list[int],
    out: list[StoredRow | None],
) -> None:
    keys = {(events[i].anima_id, events[i].dedupe_key) for i in dupes}
    params = {"org": org_id, "animas": [a for a, _ in keys], "keys": [k for _, k in keys]}
    existing = {(r["anima_id"], r["dedupe_key"]): dict(r) for r in await fetch(conn, _EXISTING, params)}
    for i in dupes:
        row = existing.get((events[i].anima_id, events[i].dedupe_key))
        if row is None:  # not inserted and not a duplicate: only a vanished anima can do that
            raise NotFoundError(f"anima {events[i].anima_id} not found")
        out[i] = StoredRow(row, False)
