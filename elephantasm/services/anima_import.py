"""Import one anima from JSON lines (format in ``elephantasm/schemas/transfer.py``) into an org.

Every line is validated and every reference checked before anything is written; then the anima
and all its rows are written in one transaction (all or nothing). Rows get new ids, allocated in
the same relative order as the file's ids, so ties in time order break the same way on both
servers and an export of the import matches the original line for line but for ids.
Embeddings are computed here, with this server's embedder, before the transaction opens.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError as SchemaError
from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from elephantasm.db import event_index
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
from elephantasm.domain.errors import ValidationError
from elephantasm.domain.event_seq import number_events
from elephantasm.domain.fact_turns import fact_turns
from elephantasm.domain.lean import lean_text
from elephantasm.ids import uuid7
from elephantasm.schemas.events import EventCreate
from elephantasm.schemas.transfer import (
    BODY_KINDS,
    AnimaRecord,
    EventRecord,
    IdentityRecord,
    IdentityVersionRecord,
    KnowledgeRecord,
    MemoryRecord,
    Record,
)
from elephantasm.services.dreams.vector_flag import index_vectors_if_large
from elephantasm.services.dreams.writer import to_inputs
from elephantasm.services.spaces import current_space
from elephantasm.services.turn_blobs import embed_turns

if TYPE_CHECKING:
    from elephantasm.llm.embedders import Embedder
    from elephantasm.runtime import Runtime

_CHUNK = 1000
# A memory record's recall state goes to memory_recalls, not to the memory row.
_RECALL_FIELDS = ("recall_count", "last_recalled_at")
_EMBED_BATCH = 256


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


def _record(number: int, line: str) -> Record:
    try:
        obj = json.loads(line)
        kind = obj.get("kind") if isinstance(obj, dict) else None
        model = AnimaRecord if number == 1 else BODY_KINDS.get(kind)  # type: ignore[arg-type]
        if model is None:
            raise ValidationError(f"line {number}: unknown record kind {kind!r}")
        record = model.model_validate(obj)
        if isinstance(record, EventRecord):  # the API's own event rules apply to imported events too
            EventCreate.model_validate(
                {k: v for k, v in obj.items() if k in EventCreate.model_fields} | {"anima_id": uuid.uuid4()}
            )
        return record
    except (json.JSONDecodeError, SchemaError, AttributeError) as exc:
        raise ValidationError(f"line {number}: {exc}") from exc


def parse_export(lines: Iterable[str]) -> Parsed:
    """Validate an export: the header first, known kinds, unique ids, no dangling reference."""
    parsed: Parsed | None = None
    for number, line in enumerate((ln for ln in lines if ln.strip()), start=1):
        record = _record(number, line)
        if parsed is None:
            parsed = Parsed(record)  # type: ignore[arg-type]
            continue
        if isinstance(record, IdentityRecord):
            if parsed.identity is not None:
                raise ValidationError(f"line {number}: a second identity record")
            parsed.identity = record
        elif isinstance(record, IdentityVersionRecord):
            parsed.versions.append(record)
        else:
            buckets: dict[str, list[Any]] = {
                "event": parsed.events,
                "memory": parsed.memories,
                "knowledge": parsed.knowledge,
            }
            buckets[record.kind].append(record)  # type: ignore[attr-defined]
            if record.id in parsed.line_of:  # type: ignore[attr-defined]
                raise ValidationError(f"line {number}: duplicate id {record.id}")  # type: ignore[attr-defined]
            parsed.line_of[record.id] = number  # type: ignore[attr-defined]
    if parsed is None:
        raise ValidationError("empty export: expected an anima header line")
    _check_references(parsed)
    return parsed


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


async def _embed(embedder: Embedder, texts: list[str]) -> list[list[float]]:
    out: list[list[float]] = []
    for start in range(0, len(texts), _EMBED_BATCH):
        out.extend(await embedder.embed(texts[start : start + _EMBED_BATCH]))
    return out


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
        await _embed(embedder, [lean_text(m.summary) for m in p.memories]),
        await _embed(embedder, [k.content for k in p.knowledge]),
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
    indexed = numbering.event_seq >= event_index.INDEX_THRESHOLD
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
    await index_vectors_if_large(session, org_id, anima_id)
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


async def import_anima(runtime: Runtime, org_id: uuid.UUID, lines: Iterable[str], name: str | None = None) -> uuid.UUID:
    """Validate, embed and write an export as a new anima of ``org_id`` (422 naming the bad line)."""
    parsed = parse_export(lines)
    vectors = await embed_parsed(runtime.embedder, parsed)
    space = await current_space(runtime)
    async with runtime.unit_of_work() as session:
        return await write_import(session, org_id, parsed, vectors, name, space)
