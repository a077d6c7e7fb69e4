"""Identity: the anima's current self-description and its versioned history.

Every change (a dream's new version, or a restore) bumps ``identities.version`` and appends the
same content with its reason to ``identity_history``, so history holds every version ever current.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import insert, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from elephantasm.db.models import Identity, IdentityVersion
from elephantasm.db.scopes import org_scoped
from elephantasm.db.tables import table_of
from elephantasm.domain.dreaming import IdentityDraft
from elephantasm.domain.errors import NotFoundError
from elephantasm.ids import uuid7
from elephantasm.services.animas import bump_state_version, get_anima
from elephantasm.services.dreams.claims import lock_anima

if TYPE_CHECKING:
    from elephantasm.services.dreams.journal import WriteContext

_IDENTITIES = table_of(Identity)
_HISTORY = table_of(IdentityVersion)


async def current_identity(session: AsyncSession, org_id: uuid.UUID, anima_id: uuid.UUID) -> Identity | None:
    """The anima's identity row, or None before the first version (and for another org's anima)."""
    stmt = select(Identity).where(col(Identity.anima_id) == anima_id, org_scoped(Identity, org_id))
    return (await session.execute(stmt)).scalar_one_or_none()


def as_draft(identity: Identity | None) -> IdentityDraft | None:
    """The identity as an engine sees it."""
    if identity is None:
        return None
    return IdentityDraft(**_fields(identity))


async def _write_version(
    session: AsyncSession,
    org_id: uuid.UUID,
    anima_id: uuid.UUID,
    fields: dict[str, Any],
    reason: str | None,
    run_id: uuid.UUID | None,
    now: datetime,
) -> int:
    """Make ``fields`` the current identity as a new version; returns the version number."""
    first = {"id": uuid7(), "org_id": org_id, "anima_id": anima_id, "version": 1, "created_at": now, "updated_at": now}
    upsert = (
        pg_insert(_IDENTITIES)
        .values({**first, **fields})
        .on_conflict_do_update(
            index_elements=[_IDENTITIES.c.anima_id],
            set_={"version": _IDENTITIES.c.version + 1, "updated_at": now, **fields},
        )
        .returning(_IDENTITIES.c.version)
    )
    version = int((await session.execute(upsert)).scalar_one())
    history = {"id": uuid7(), "org_id": org_id, "anima_id": anima_id, "version": version, "created_at": now}
    await session.execute(insert(_HISTORY).values({**history, "reason": reason, "run_id": run_id, **fields}))
    return version


def _fields(identity: Identity | IdentityVersion | IdentityDraft) -> dict[str, Any]:
    """The columns an identity version holds."""
    return {
        "personality_type": identity.personality_type,
        "communication_style": identity.communication_style,
        "self": dict(identity.self or {}),
        "prose": identity.prose,
    }


async def apply_identity_draft(
    session: AsyncSession, ctx: WriteContext, draft: IdentityDraft, actions: list[dict]
) -> int:
    """Write a dream's proposed identity as a new version (inside the chunk's transaction)."""
    before = await current_identity(session, ctx.org_id, ctx.anima_id)
    fields = _fields(draft)
    fields["personality_type"] = draft.personality_type[:100] if draft.personality_type else None
    version = await _write_version(session, ctx.org_id, ctx.anima_id, fields, draft.reason, ctx.run_id, ctx.now)
    keys = ("personality_type", "communication_style")
    summary_before = None if before is None else {"version": before.version, **{k: getattr(before, k) for k in keys}}
    after = {"version": version, **{k: fields[k] for k in keys}, "reason": draft.reason}
    actions.append(ctx.action("updated", "identity", ctx.anima_id, summary_before, after))
    return version


async def get_identity(session: AsyncSession, org_id: uuid.UUID, anima_id: uuid.UUID) -> Identity:
    """The current identity of one of the org's animas; NotFoundError if it has none yet."""
    await get_anima(session, org_id, anima_id)
    identity = await current_identity(session, org_id, anima_id)
    if identity is None:
        raise NotFoundError(f"anima {anima_id} has no identity yet")
    return identity


async def identity_history(session: AsyncSession, org_id: uuid.UUID, anima_id: uuid.UUID) -> list[IdentityVersion]:
    """Every version, newest first (empty before the first)."""
    await get_anima(session, org_id, anima_id)
    stmt = (
        select(IdentityVersion)
        .where(col(IdentityVersion.anima_id) == anima_id, org_scoped(IdentityVersion, org_id))
        .order_by(col(IdentityVersion.version).desc())
    )
    return list((await session.execute(stmt)).scalars())


async def restore_identity(
    session: AsyncSession, org_id: uuid.UUID, anima_id: uuid.UUID, version: int, now: datetime
) -> Identity:
    """Make an earlier version current again, recorded as a new version; bumps ``state_version``."""
    await get_anima(session, org_id, anima_id)
    await lock_anima(session, anima_id)
    old = (
        await session.execute(
            select(IdentityVersion).where(
                col(IdentityVersion.anima_id) == anima_id,
                col(IdentityVersion.version) == version,
                org_scoped(IdentityVersion, org_id),
            )
        )
    ).scalar_one_or_none()
    if old is None:
        raise NotFoundError(f"anima {anima_id} has no identity version {version}")
    await _write_version(session, org_id, anima_id, _fields(old), f"restored version {version}", None, now)
    await bump_state_version(session, [anima_id])
    identity = await current_identity(session, org_id, anima_id)
    assert identity is not None
    await session.refresh(identity)
    return identity
