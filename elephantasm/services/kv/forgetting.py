"""Forgetting in the local model's memory: what a deleted memory or knowledge item leaves there.

A KV snapshot holds its pack's text twice (the prefix text in the file's header, the rendered items
in the row's ``meta``) and the model state computed from it; a recorded generation holds the prompt
it was given. When items are forgotten, in the deleting transaction:

- every snapshot of the anima whose pack held one of them goes (row, and the file once no row of
  the org names it);
- every recorded generation of the anima whose prompt prefix contains one of their texts (as
  stored, or as the snapshot rendered it) loses its prefix (``prompt.forgotten`` = true); its
  replay then answers 409.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from sqlalchemy import ARRAY, Text, any_, cast, delete, literal, update
from sqlalchemy.dialects.postgresql import JSONB

from elephantasm.db.models import GenerationRow, KVSnapshotRow
from elephantasm.db.tables import table_of
from elephantasm.services.kv.rows import purge_anima, unlink_orphans

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from elephantasm.local.holder import LocalModels
    from elephantasm.local.store import SnapshotStore
    from elephantasm.services.forget import Forgotten

_S = table_of(KVSnapshotRow)
_G = table_of(GenerationRow)
FORGOTTEN_PREFIX: dict[str, Any] = {"prefix": "", "forgotten": True}
"""What a recorded prompt holding forgotten text keeps of its prefix (replay then answers 409)."""


def like_pattern(text: str) -> str:
    """A ``LIKE`` pattern matching ``text`` anywhere (its own ``%``, ``_`` and ``\\`` taken literally)."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _any_of(patterns: set[str]) -> Any:
    return any_(literal(sorted(patterns), type_=ARRAY(Text)))


def rendered_texts(meta: dict[str, Any] | None, ids: set[str]) -> list[str]:
    """The texts a snapshot's pack rendered for ``ids`` (``meta.items`` = [id, text, score] triples)."""
    items = (meta or {}).get("items") or []
    return [str(it[1]) for it in items if isinstance(it, list | tuple) and len(it) > 1 and str(it[0]) in ids]


async def forget_items(session: AsyncSession, store: SnapshotStore, org_id: uuid.UUID, done: Forgotten) -> int:
    """Erase ``done``'s items from the anima's snapshots and recorded prompts; returns snapshots removed."""
    ids = {str(i) for i in done.ids}
    if not ids:
        return 0
    mentions = cast(_S.c.meta, Text).like(_any_of({like_pattern(i) for i in ids}))
    gone = (
        await session.execute(
            delete(_S)
            .where(_S.c.org_id == org_id, _S.c.anima_id == done.anima_id, mentions)
            .returning(_S.c.org_id, _S.c.sha256, _S.c.meta)
        )
    ).all()
    texts = set(done.texts) | {t for row in gone for t in rendered_texts(row.meta, ids)}
    if texts:
        prefix = _G.c.prompt["prefix"].astext
        await session.execute(
            update(_G)
            .where(
                _G.c.org_id == org_id,
                _G.c.anima_id == done.anima_id,
                prefix.like(_any_of({like_pattern(t) for t in texts})),
            )
            .values(prompt=_G.c.prompt.op("||")(literal(FORGOTTEN_PREFIX, JSONB)))
        )
    await unlink_orphans(session, store, [(r.org_id, r.sha256) for r in gone])
    return len(gone)


async def forget_hook(models: LocalModels, session: AsyncSession, org_id: uuid.UUID, done: Forgotten) -> None:
    """The ``ForgetHook`` of the local model's memory: forgotten items leave its snapshots and
    recorded prompts (:func:`forget_items`) and the KV states the process keeps for the org."""
    await forget_items(session, models.store, org_id, done)
    models.forget_org(org_id)


async def purge_hook(models: LocalModels, session: AsyncSession, org_id: uuid.UUID, anima_id: uuid.UUID) -> None:
    """The ``AnimaPurgeHook`` of the local model's memory: a hard purge erases the anima's KV
    snapshots too (rows and files) and the KV states the process keeps for the org."""
    await purge_anima(session, models.store, org_id, anima_id)
    models.forget_org(org_id)
