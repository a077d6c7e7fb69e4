"""Export one anima as JSON lines (format in ``elephantasm/schemas/transfer.py``).

Rows come out in a stable order (by time, then id) so that an export, imported elsewhere and
exported again, gives the same lines but for ids: the import keeps the relative order of ids.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from elephantasm.db.models import Event, IdentityVersion, Knowledge, KnowledgeMemory, Memory, MemoryRecall
from elephantasm.db.scopes import of_anima, org_scoped, visible
from elephantasm.db.size_switches import event_rows
from elephantasm.schemas.transfer import (
    AnimaRecord,
    EventRecord,
    IdentityRecord,
    IdentityVersionRecord,
    KnowledgeRecord,
    LineTally,
    MemoryRecord,
    Record,
)
from elephantasm.services.animas import get_anima
from elephantasm.services.dreams.identity import current_identity

_BATCH = 1000


# Records are built unvalidated (``model_construct``): the rows are the server's own, and a row that
# breaks a rule made after it was stored still exports, for the import to refuse naming its line.
def _fields(row: Any, record: type[Record]) -> dict[str, Any]:
    return {name: getattr(row, name) for name in record.model_fields if name != "kind" and hasattr(row, name)}


async def _links(
    session: AsyncSession, table: Any, owner: Any, source: Any, org_id: uuid.UUID, anima_id: uuid.UUID
) -> dict[Any, list]:
    """owner id → its source ids (sorted), for one anima's provenance table."""
    out: dict[Any, list] = {}
    stmt = select(owner, source).where(table.anima_id == anima_id, org_scoped(table, org_id)).order_by(owner, source)
    rows = await session.execute(stmt)
    for owner_id, source_id in rows.all():
        out.setdefault(owner_id, []).append(source_id)
    return out


async def _recalls(session: AsyncSession, org_id: uuid.UUID, anima_id: uuid.UUID) -> dict[uuid.UUID, dict[str, Any]]:
    """memory id → its recall state, for the anima's recalled memories (the rest: never recalled)."""
    r = MemoryRecall  # reached through the anima's memories: memory_recalls has no anima index
    stmt = (
        select(col(r.memory_id), col(r.recall_count), col(r.last_recalled_at))
        .join(Memory, col(Memory.id) == col(r.memory_id))
        .where(col(Memory.anima_id) == anima_id, org_scoped(Memory, org_id))
    )
    rows = (await session.execute(stmt)).all()
    return {m: {"recall_count": n, "last_recalled_at": at} for m, n, at in rows}


async def _rows(session: AsyncSession, stmt: Any) -> AsyncIterator[Any]:
    """ORM rows of ``stmt``, fetched ``_BATCH`` at a time (an anima may hold millions of events)."""
    async for row in await session.stream_scalars(stmt.execution_options(yield_per=_BATCH)):
        yield row


async def export_records(session: AsyncSession, org_id: uuid.UUID, anima_id: uuid.UUID) -> AsyncIterator[Record]:
    """Every record of one live anima of the org, header first (NotFoundError otherwise).

    ``session`` must not have begun its transaction yet: every read here is made in one
    REPEATABLE READ snapshot, so writes committed meanwhile (a dream, an extract, a forget) show in
    all of them or in none, and the export never names an event or memory it does not contain."""
    if session.in_transaction():  # the isolation level could no longer be chosen
        raise RuntimeError("export_records needs a session whose transaction has not begun")
    await session.connection(execution_options={"isolation_level": "REPEATABLE READ", "postgresql_readonly": True})
    anima = await get_anima(session, org_id, anima_id)
    yield AnimaRecord.model_construct(**_fields(anima, AnimaRecord))
    # A large anima's events are streamed from the (partial) time index; a small anima's few rows are sorted.
    events = select(Event).where(*of_anima(Event, anima_id, anima.key), event_rows(Event, anima.events_indexed))
    events = events.order_by(col(Event.occurred_at), col(Event.created_at), col(Event.id))
    async for row in _rows(session, events):
        yield EventRecord.model_construct(**_fields(row, EventRecord))
    memories = (
        select(Memory)
        .where(col(Memory.anima_id) == anima_id, *visible(Memory, org_id))
        .order_by(col(Memory.created_at), col(Memory.time_start), col(Memory.id))
    )
    recalls = await _recalls(session, org_id, anima_id)
    exported: set[uuid.UUID] = set()
    async for row in _rows(session, memories):
        exported.add(row.id)
        yield MemoryRecord.model_construct(
            **_fields(row, MemoryRecord), **recalls.get(row.id, {})
        )  # event_ids stored ascending
    learnt = await _links(
        session, KnowledgeMemory, KnowledgeMemory.knowledge_id, KnowledgeMemory.memory_id, org_id, anima_id
    )
    exportable = (col(Knowledge.anima_id) == anima_id, *visible(Knowledge, org_id))
    live = set((await session.execute(select(col(Knowledge.id)).where(*exportable))).scalars())
    # The same predicate again, not "id IN (live)": one bound parameter per item would fail past
    # Postgres's 32,767 per statement.
    knowledge = (
        select(Knowledge)
        .where(*exportable)
        .order_by(col(Knowledge.created_at), col(Knowledge.valid_from), col(Knowledge.id))
    )
    async for row in _rows(session, knowledge):
        fields = _fields(row, KnowledgeRecord)
        if fields["superseded_by"] not in live:
            fields["superseded_by"] = None  # replaced by something since forgotten
        yield KnowledgeRecord.model_construct(**fields, memory_ids=[m for m in learnt.get(row.id, []) if m in exported])
    identity = await current_identity(session, org_id, anima_id)
    if identity is not None:
        yield IdentityRecord.model_construct(**_fields(identity, IdentityRecord))
    versions = (
        select(IdentityVersion)
        .where(col(IdentityVersion.anima_id) == anima_id, org_scoped(IdentityVersion, org_id))
        .order_by(col(IdentityVersion.version))
    )
    async for row in _rows(session, versions):
        yield IdentityVersionRecord.model_construct(**_fields(row, IdentityVersionRecord))


async def export_lines(session: AsyncSession, org_id: uuid.UUID, anima_id: uuid.UUID) -> AsyncIterator[str]:
    """:func:`export_records` as JSON lines (each ends with a newline), then the trailer line that
    counts and hashes them (an import refuses a file that does not match its trailer)."""
    tally = LineTally()
    async for record in export_records(session, org_id, anima_id):
        line = record.model_dump_json() + "\n"
        tally.add(record.kind, line)  # type: ignore[attr-defined]
        yield line
    yield tally.trailer().model_dump_json() + "\n"
