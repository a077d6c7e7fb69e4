"""Forgetting: the statements behind ``services/forget.py``, which scrub a memory or knowledge item
and every row that copied its text (the dream journal, served packs and snapshots)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Text, any_, cast, delete, func, literal, select, text, update
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from elephantasm.db.models import Identity, IdentityVersion, Knowledge, Memory, MemoryPackRow, PackSnapshot
from elephantasm.db.scopes import live_memory, visible
from elephantasm.db.tables import rowcount, table_of

_M = table_of(Memory)
_K = table_of(Knowledge)
TABLES = {"memory": _M, "knowledge": _K}
"""The table of each kind of forgettable item."""

# Topics whose knowledge counts as identity evidence (see domain/dreaming/style.evolve_identity).
_EVIDENCE_TYPES = ("FACT", "EXPERIENCE")

# Text: NOT EXISTS over a join with ``<> ALL`` reads plainer as SQL than as Core.
_ORPHANED_SQL = text("""
SELECT k.id FROM knowledge k
WHERE k.anima_id = :anima AND k.deleted_at IS NULL
  AND EXISTS (SELECT 1 FROM knowledge_memories l WHERE l.knowledge_id = k.id AND l.memory_id = ANY(:gone))
  AND NOT EXISTS (
      SELECT 1 FROM knowledge_memories l JOIN memories m ON m.id = l.memory_id
      WHERE l.knowledge_id = k.id AND m.deleted_at IS NULL AND m.id <> ALL(:gone))
""")


def _redacted(values: str) -> str:
    # The row's jsonb array ``values`` with a forgotten target's entry replaced (a NULL column: every
    # entry JSON null, as the dream journal stores it).
    return f"""(SELECT jsonb_agg(CASE WHEN t.id = ANY(:ids) THEN '{{"forgotten": true}}'::jsonb
                              ELSE coalesce(d.{values} -> (t.n::int - 1), 'null') END ORDER BY t.n)
        FROM unnest(d.target_ids) WITH ORDINALITY t(id, n))"""


# Text: Core has no ``unnest … WITH ORDINALITY`` in a correlated subquery. Every journal entry whose
# target is forgotten keeps its target id but loses its before and after (both become
# {"forgotten": true}); the other entries of its batched row are untouched.
_REDACT_JOURNAL_SQL = text(f"""
UPDATE dream_actions d SET befores = {_redacted("befores")}, afters = {_redacted("afters")}
WHERE d.anima_id = :anima AND d.target_ids && CAST(:ids AS uuid[])
""")


async def anima_of_live_item(
    session: AsyncSession, kind: str, org_id: uuid.UUID, item_id: uuid.UUID
) -> uuid.UUID | None:
    """The anima of the org's live ``kind`` item ``item_id`` (its anima live too), or None."""
    table = TABLES[kind]
    stmt = select(table.c.anima_id).where(table.c.id == item_id, *visible(table, org_id))
    return (await session.execute(stmt)).scalar_one_or_none()


async def memory_closure(
    session: AsyncSession, anima_id: uuid.UUID, memory_id: uuid.UUID
) -> tuple[list[uuid.UUID], list[uuid.UUID], list[uuid.UUID]]:
    """What forgetting a memory of the anima takes with it: (the memory and the live memories merged
    into it, the live knowledge drawn only from those, the events they were distilled from)."""
    merged = select(_M.c.id).where(_M.c.merged_into == memory_id, live_memory(_M))
    gone = [memory_id, *(await session.execute(merged)).scalars()]
    orphaned = (await session.execute(_ORPHANED_SQL, {"anima": anima_id, "gone": gone})).scalars()
    sources = select(func.unnest(_M.c.event_ids)).where(_M.c.id.in_(gone)).distinct()
    return gone, list(orphaned), list((await session.execute(sources)).scalars())


async def item_texts(
    session: AsyncSession, memory_ids: list[uuid.UUID], knowledge_ids: list[uuid.UUID]
) -> list[tuple[str | None, str | None]]:
    """(summary, content) of each of the memories and knowledge items."""
    rows: list[tuple[str | None, str | None]] = []
    for table, ids in ((_M, memory_ids), (_K, knowledge_ids)):
        stmt = select(table.c.summary, table.c.content).where(table.c.id.in_(ids))
        rows += [(summary, content) for summary, content in (await session.execute(stmt)).all()]
    return rows


async def evidence(session: AsyncSession, knowledge_ids: Sequence[uuid.UUID]) -> list[tuple[str, datetime]]:
    """(topic, learnt at) of the evidence-bearing items among ``knowledge_ids``."""
    stmt = select(_K.c.topic, _K.c.created_at).where(
        _K.c.id.in_(list(knowledge_ids)), _K.c.type.in_(_EVIDENCE_TYPES), _K.c.topic.is_not(None)
    )
    return [(t, at) for t, at in (await session.execute(stmt)).all()]


async def identity_rows(session: AsyncSession, anima_id: uuid.UUID) -> list[IdentityVersion | Identity]:
    """Every identity version of the anima, then its current identity (if any)."""
    versions = await session.execute(select(IdentityVersion).where(col(IdentityVersion.anima_id) == anima_id))
    current = await session.execute(select(Identity).where(col(Identity.anima_id) == anima_id))
    return [*versions.scalars(), *current.scalars()]


# What a forgotten item keeps: its row and ids (provenance, the journal), nothing of its text.
_SCRUBBED: dict[str, dict[str, Any]] = {
    # A memory's blob holds its turn lines verbatim.
    "memory": {"summary": "", "content": None, "embedding": None, "turn_vectors": None, "meta": {}},
    "knowledge": {
        "content": "",
        "summary": None,
        "subject_key": None,
        "content_hash": "",
        "embedding": None,
        "meta": {},
    },
}


async def scrub(session: AsyncSession, kind: str, ids: list[uuid.UUID], now: datetime) -> None:
    """Blank the text, vectors and meta of the ``kind`` items and mark them deleted at ``now``."""
    if ids:
        table = TABLES[kind]
        await session.execute(
            update(table).where(table.c.id.in_(ids)).values(**_SCRUBBED[kind], deleted_at=now, updated_at=now)
        )


async def redact_journal(session: AsyncSession, anima_id: uuid.UUID, ids: list[uuid.UUID]) -> int:
    """The anima's journal entries about ``ids`` lose their before and after; returns how many
    journal rows changed."""
    return rowcount(await session.execute(_REDACT_JOURNAL_SQL, {"anima": anima_id, "ids": ids}))


async def purge_served(session: AsyncSession, anima_id: uuid.UUID, cited: list[uuid.UUID]) -> int:
    """Delete the anima's served packs mentioning any of ``cited`` and all its shared snapshots;
    returns how many packs went."""
    patterns = literal([f"%{i}%" for i in cited], ARRAY(Text))
    packs = delete(MemoryPackRow).where(
        col(MemoryPackRow.anima_id) == anima_id, cast(col(MemoryPackRow.content), Text).like(any_(patterns))
    )
    purged = rowcount(await session.execute(packs))
    await session.execute(delete(PackSnapshot).where(col(PackSnapshot.anima_id) == anima_id))
    return purged
