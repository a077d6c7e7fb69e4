"""Import one anima from JSON lines (format in ``elephantasm/schemas/transfer.py``) into an org.

The caller runs :func:`parse_export` (every line and reference checked before anything is
written), :func:`embed_parsed` (before the transaction opens), then :func:`write_import` in its unit
of work. New ids keep the file's relative order, so an export of the import matches the original
line for line but for ids.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import msgspec
from pydantic import ValidationError as SchemaError
from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from elephantasm.db import size_switches
from elephantasm.db.models import (
    Anima,
    DreamChunk,
    Event,
    Identity,
    IdentityVersion,
    Knowledge,
    KnowledgeMemory,
    Memory,
    MemoryRecall,
)
from elephantasm.domain.errors import DomainError, ValidationError
from elephantasm.domain.event_seq import number_events
from elephantasm.domain.fact_turns import fact_turns
from elephantasm.domain.inputs import schema_problems
from elephantasm.domain.lean import lean_text
from elephantasm.ids import uuid7
from elephantasm.schemas.animas import AnimaCreate
from elephantasm.schemas.common import check_json_fields
from elephantasm.schemas.events import EventCreate
from elephantasm.schemas.transfer import (
    BODY_KINDS,
    AnimaRecord,
    EventRecord,
    IdentityRecord,
    IdentityVersionRecord,
    KnowledgeRecord,
    LineTally,
    MemoryRecord,
    Record,
    TrailerRecord,
)
from elephantasm.services.dreams.writer import to_inputs
from elephantasm.services.events import check_events
from elephantasm.services.turn_blobs import embed_turns

if TYPE_CHECKING:
    from elephantasm.llm.embedders import Embedder
    from elephantasm.settings import Settings

_CHUNK = 1000
# A memory record's recall state goes to memory_recalls, not to the memory row.
_RECALL_FIELDS = ("recall_count", "last_recalled_at")
_decode_json = msgspec.json.Decoder().decode
_ANY_ANIMA = {"anima_id": uuid.UUID(int=0)}  # an event line names no anima: the import makes one


@dataclass
class Parsed:
    """A validated export, records grouped by kind in file order."""

    anima: AnimaRecord
    events: list[EventRecord] = field(default_factory=list)
    memories: list[MemoryRecord] = field(default_factory=list)
    knowledge: list[KnowledgeRecord] = field(default_factory=list)
    identity: IdentityRecord | None = None
    versions: list[IdentityVersionRecord] = field(default_factory=list)
    line_of: dict[uuid.UUID, int] = field(default_factory=dict)


@contextmanager
def at_line(number: int) -> Iterator[None]:
    """Errors raised in the block name line ``number`` (and keep their status)."""
    try:
        yield
    except SchemaError as exc:
        raise ValidationError(f"line {number}: {schema_problems(exc)}") from None
    except DomainError as exc:
        raise type(exc)(f"line {number}: {exc.detail}") from None


def decode_line(line: str) -> dict[str, Any]:
    """One line as a JSON object, decoded as the API decodes request bodies (msgspec)."""
    try:
        obj = _decode_json(line)
    except msgspec.DecodeError as exc:
        raise ValidationError(f"malformed JSON: {exc}") from None
    except RecursionError:
        raise ValidationError("malformed JSON: nested too deeply to decode") from None
    if not isinstance(obj, dict):
        raise ValidationError("not a JSON object")
    return obj


def _live_rules(record: Record, obj: dict[str, Any], settings: Settings, now: datetime) -> None:
    """The checks the live API makes of the same data, by the same code: an event passes
    ``POST /api/events`` (event type, sizes, ``occurred_at`` window, JSON limits), the header
    ``POST /api/animas``, every other record the JSON limits of its free-form fields."""
    if isinstance(record, EventRecord):
        event = EventCreate.model_validate({k: v for k, v in obj.items() if k in EventCreate.model_fields} | _ANY_ANIMA)
        check_events([event], settings, now)
        return
    if isinstance(record, AnimaRecord):
        AnimaCreate.model_validate({k: v for k, v in obj.items() if k in AnimaCreate.model_fields})
    check_json_fields(record, settings.max_json_depth, settings.max_json_bytes)


def _record(obj: dict[str, Any], header: bool) -> Record | TrailerRecord:
    kind = obj.get("kind")
    if kind == "trailer" and not header:
        return TrailerRecord.model_validate(obj)
    model = AnimaRecord if header else BODY_KINDS.get(kind)  # type: ignore[arg-type]
    if model is None:
        raise ValidationError(f"unknown record kind {kind!r}")
    return model.model_validate(obj)


def _claim(seen: dict[Any, int], value: Any, what: str, number: int) -> None:
    """Line ``number`` holds ``value``, which an anima holds once (a unique index the import writes to)."""
    if value in seen:
        raise ValidationError(f"{what} repeats line {seen[value]}'s; an anima holds each only once")
    seen[value] = number


def _file(parsed: Parsed, record: Record, number: int, seen: dict[Any, int]) -> None:
    """Put a body record in its bucket, refusing a value that may occur only once per anima (ids in
    ``parsed.line_of``, the rest in ``seen``)."""
    if isinstance(record, IdentityRecord):
        if parsed.identity is not None:
            raise ValidationError("a second identity record")
        parsed.identity = record
        return
    if isinstance(record, IdentityVersionRecord):
        _claim(seen, ("version", record.version), f"identity_version version {record.version}", number)
        parsed.versions.append(record)
        return
    if isinstance(record, EventRecord) and record.dedupe_key is not None:
        _claim(seen, ("dedupe_key", record.dedupe_key), f"dedupe_key {record.dedupe_key!r}", number)
    _claim(parsed.line_of, record.id, f"id {record.id}", number)  # type: ignore[attr-defined]
    buckets: dict[str, list[Any]] = {"event": parsed.events, "memory": parsed.memories, "knowledge": parsed.knowledge}
    buckets[record.kind].append(record)  # type: ignore[attr-defined]


def parse_export(lines: Iterable[str], settings: Settings, now: datetime, *, partial: bool = False) -> Parsed:
    """Validate an export before anything is written: the header first, known kinds, every rule of
    the live API on every line, values an anima holds once held once, no dangling reference, and a
    trailer that matches the lines (a truncated or altered file is refused unless ``partial``)."""
    parsed: Parsed | None = None
    tally, trailer = LineTally(), None
    seen: dict[Any, int] = {}
    for number, line in enumerate((ln for ln in lines if ln.strip()), start=1):
        with at_line(number):
            if trailer is not None:
                raise ValidationError("a line after the trailer (the trailer must be the last line)")
            obj = decode_line(line)
            record = _record(obj, header=parsed is None)
            if isinstance(record, TrailerRecord):
                trailer = record
                continue
            _live_rules(record, obj, settings, now)
            tally.add(record.kind, line)  # type: ignore[attr-defined]
            if parsed is None:
                parsed = Parsed(record)  # type: ignore[arg-type]
            else:
                _file(parsed, record, number, seen)
    if parsed is None:
        raise ValidationError("empty export: expected an anima header line")
    if not partial:
        _check_trailer(tally, trailer)
    _check_references(parsed)
    return parsed


def _check_trailer(tally: LineTally, trailer: TrailerRecord | None) -> None:
    if trailer is None:
        raise ValidationError(
            "trailer: the export has no trailer line (kind 'trailer'), so it may be cut short; "
            "import what it holds anyway with partial=true"
        )
    mismatch = tally.mismatch(trailer)
    if mismatch:
        raise ValidationError(
            f"trailer: the lines do not match it ({mismatch}); the file is cut short or was altered. "
            "Import what it holds anyway with partial=true"
        )


def _check_references(p: Parsed) -> None:
    events, memories, knowledge = ({r.id for r in rs} for rs in (p.events, p.memories, p.knowledge))
    refs: list[tuple[uuid.UUID, Sequence[uuid.UUID | None], set[uuid.UUID], str]] = []
    for m in p.memories:
        refs += [(m.id, m.event_ids, events, "event"), (m.id, [m.merged_into], memories, "memory")]
    for k in p.knowledge:
        refs += [(k.id, k.memory_ids, memories, "memory"), (k.id, [k.superseded_by], knowledge, "knowledge")]
    for owner, targets, known, kind in refs:
        missing = [t for t in targets if t is not None and t not in known]
        if missing:
            raise ValidationError(f"line {p.line_of[owner]}: refers to {kind} {missing[0]}, not in the export")


def _new_ids(old: Iterable[uuid.UUID]) -> dict[uuid.UUID, uuid.UUID]:
    """Fresh ids in the same relative order as ``old`` (uuid order = Postgres uuid order)."""
    ordered = sorted(set(old))
    return dict(zip(ordered, sorted(uuid7() for _ in ordered), strict=True))


async def _insert(session: AsyncSession, model: type, rows: list[dict[str, Any]]) -> None:
    for start in range(0, len(rows), _CHUNK):
        await session.execute(insert(model), rows[start : start + _CHUNK])


def _plain(record: Record, *drop: str) -> dict[str, Any]:
    return record.model_dump(exclude={"kind", "id", *drop})


async def embed_parsed(
    embedder: Embedder, p: Parsed
) -> tuple[list[list[float]], list[list[float]], list[bytes | None]]:
    """Vectors for the memories' summaries and the knowledge's contents, and the memories' turn
    vectors (before any transaction), made from the same texts the dreamer embeds (a memory's summary
    without its chat boilerplate; its user turns), so the copy serves the same packs."""
    events = {e.id: e for e in to_inputs(p.events)}
    return (
        await embedder.embed([lean_text(m.summary) for m in p.memories]),
        await embedder.embed([k.content for k in p.knowledge]),
        await embed_turns(embedder, [fact_turns(events, m.event_ids, m.content) for m in p.memories]),
    )


async def write_import(
    session: AsyncSession,
    org_id: uuid.UUID,
    p: Parsed,
    vectors: tuple[list[list[float]], list[list[float]], list[bytes | None]],
    name: str | None = None,
    space: int | None = None,
) -> uuid.UUID:
    """Write a parsed export as a new anima of ``org_id`` inside the caller's transaction; its id.

    ``space`` is the code of the embedding space ``vectors`` were made in (this server's embedder,
    ``services.spaces``)."""
    ids = _new_ids([*(r.id for r in p.events), *(r.id for r in p.memories), *(r.id for r in p.knowledge)])
    ref = lambda old: None if old is None else ids[old]  # noqa: E731
    anima_id = uuid.uuid4()  # animas keep random ids, opaque to clients (elephantasm/ids.py)
    at = {"org_id": org_id, "anima_id": anima_id}
    header = _plain(p.anima, "format") | ({"name": name} if name else {})
    # Distilled events first, chunk by chunk, so the watermark keeps them distilled (domain/event_seq.py).
    numbering = number_events([e.distilled_at for e in p.events])
    # A large export lands in the time and session indexes at once, as its inserts would have put it.
    indexed = size_switches.events_large(numbering.event_seq)
    anima_key = (
        await session.execute(
            insert(Anima)
            .values(
                id=anima_id,
                org_id=org_id,
                state_version=1,
                event_seq=numbering.event_seq,
                distilled_seq=numbering.distilled_seq,
                events_indexed=indexed,
                **header,
            )
            .returning(col(Anima.key))
        )
    ).scalar_one()
    await _insert(
        session,
        Event,
        [  # updated_at is not stored: it is created_at; the key (the new anima's) is
            # the event's only reference to its anima and org
            {
                **_plain(e, "distilled_at", "updated_at"),
                "id": ids[e.id],
                "seq": seq,
                "anima_key": anima_key,
                "time_indexed": indexed or None,
            }
            for e, seq in zip(p.events, numbering.seqs, strict=True)
        ],
    )
    await _insert(
        session,
        DreamChunk,
        [
            {"id": uuid7(), "first_seq": c.first, "last_seq": c.last, "claimed_at": c.at, "distilled_at": c.at} | at
            for c in numbering.chunks
        ],
    )
    await _insert(
        session,
        Memory,
        [
            {
                **_plain(m, "event_ids", *_RECALL_FIELDS),
                "id": ids[m.id],
                "merged_into": ref(m.merged_into),
                "embedding": v,
                "embedding_space": space,
                "turn_vectors": turns,
                "event_ids": sorted({ids[e] for e in m.event_ids}),
                **at,
            }
            for m, v, turns in zip(p.memories, vectors[0], vectors[2], strict=True)
        ],
    )
    # A large export lands on the HNSW path at once, as the dreamer would have put it.
    await size_switches.index_vectors_if_large(session, org_id, anima_id)
    await _insert(
        session,
        MemoryRecall,
        [
            {"memory_id": ids[m.id], "recall_count": m.recall_count, "last_recalled_at": m.last_recalled_at, **at}
            for m in p.memories
            if m.recall_count or m.last_recalled_at is not None
        ],
    )
    await _insert(
        session,
        Knowledge,
        [
            {
                **_plain(k, "memory_ids"),
                "id": ids[k.id],
                "superseded_by": ref(k.superseded_by),
                "embedding": v,
                "embedding_space": space,
                **at,
            }
            for k, v in zip(p.knowledge, vectors[1], strict=True)
        ],
    )
    await _insert(
        session,
        KnowledgeMemory,
        [
            {"knowledge_id": ids[k.id], "memory_id": ids[m], **at}
            for k in p.knowledge
            for m in dict.fromkeys(k.memory_ids)
        ],
    )
    if p.identity is not None:
        await _insert(session, Identity, [{**_plain(p.identity), "id": uuid7(), **at}])
    await _insert(session, IdentityVersion, [{**_plain(v), "id": uuid7(), **at} for v in p.versions])
    return anima_id
