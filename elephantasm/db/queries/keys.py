"""Orgs and their API keys: the statements behind ``services/keys.py``."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, String, cast, func, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from elephantasm.db.models import ApiKey, Org

TOUCH_INTERVAL = timedelta(minutes=1)
"""A key's ``last_used_at`` is written at most this often."""


async def add_org_if_new(session: AsyncSession, name: str) -> Org:
    """The org called ``name``, inserted if new (concurrent callers get the same row, never an error)."""
    await session.execute(
        pg_insert(Org).values(id=uuid.uuid4(), name=name).on_conflict_do_nothing(index_elements=["name"])
    )
    return (await session.execute(select(Org).where(col(Org.name) == name))).scalar_one()


async def org_named(session: AsyncSession, name: str) -> Org | None:
    """The org called ``name``, or None."""
    return (await session.execute(select(Org).where(col(Org.name) == name))).scalar_one_or_none()


async def org_names(session: AsyncSession, limit: int) -> list[str]:
    """The first ``limit`` org names, sorted."""
    stmt = select(col(Org.name)).order_by(col(Org.name)).limit(limit)
    return list((await session.execute(stmt)).scalars())


async def org_name(session: AsyncSession, org_id: uuid.UUID) -> str | None:
    """The name of the org ``org_id``, or None if there is none."""
    stmt = select(col(Org.name)).where(col(Org.id) == org_id)
    return (await session.execute(stmt)).scalar_one_or_none()


async def key_by_hash(session: AsyncSession, digest: str) -> Row | None:
    """(id, org_id, revoked_at, expires_at, scope, prefix, and the org's name) of the key whose hash
    is ``digest``, or None."""
    return await _key_row(session, col(ApiKey.key_hash) == digest)


async def key_by_id(session: AsyncSession, key_id: uuid.UUID) -> Row | None:
    """The key ``key_id`` as :func:`key_by_hash` reads it, or None."""
    return await _key_row(session, col(ApiKey.id) == key_id)


async def _key_row(session: AsyncSession, which: ColumnElement[bool]) -> Row | None:
    stmt = (
        select(
            col(ApiKey.id),
            col(ApiKey.org_id),
            col(ApiKey.revoked_at),
            col(ApiKey.expires_at),
            col(ApiKey.scope),
            col(ApiKey.prefix),
            col(Org.name),
        )
        .join(Org, col(Org.id) == col(ApiKey.org_id))
        .where(which)
    )
    return (await session.execute(stmt)).one_or_none()


async def keys_with_org_names(session: AsyncSession, org_name: str | None = None) -> list[tuple[ApiKey, str]]:
    """Keys with their org's name, of every org or the one called ``org_name``, oldest first."""
    stmt = (
        select(ApiKey, col(Org.name))
        .join(Org, col(Org.id) == col(ApiKey.org_id))
        .order_by(col(ApiKey.created_at), col(ApiKey.id))
    )
    if org_name is not None:
        stmt = stmt.where(col(Org.name) == org_name)
    return [(k, n) for k, n in (await session.execute(stmt)).all()]


def _referenced(key_id: uuid.UUID | None, id_suffix: str | None, prefix: str | None) -> ColumnElement[bool]:
    if key_id is not None:
        return col(ApiKey.id) == key_id
    if id_suffix is not None:
        return cast(col(ApiKey.id), String).endswith(id_suffix)
    return col(ApiKey.prefix) == prefix


async def lock_active_keys(
    session: AsyncSession,
    org_id: uuid.UUID | None,
    limit: int,
    key_id: uuid.UUID | None,
    id_suffix: str | None,
    prefix: str | None,
) -> list[ApiKey]:
    """Up to ``limit`` active keys (of ``org_id``, or of any org when None) with this id, id suffix
    or display prefix (the first given), locked for update."""
    stmt = select(ApiKey).where(col(ApiKey.revoked_at).is_(None), _referenced(key_id, id_suffix, prefix))
    if org_id is not None:
        stmt = stmt.where(col(ApiKey.org_id) == org_id)
    return list((await session.execute(stmt.limit(limit).with_for_update())).scalars())


async def revoke(session: AsyncSession, key_id: uuid.UUID) -> ApiKey:
    """Mark the key revoked now; returns the updated row."""
    stmt = update(ApiKey).where(col(ApiKey.id) == key_id).values(revoked_at=func.now()).returning(ApiKey)
    return (await session.execute(stmt)).scalars().one()


async def count_keys(session: AsyncSession) -> int:
    """How many keys exist, in every org."""
    return (await session.execute(select(func.count()).select_from(ApiKey))).scalar_one()


async def keys_of_org(session: AsyncSession, org_id: uuid.UUID) -> list[ApiKey]:
    """Keys of one org, oldest first."""
    stmt = select(ApiKey).where(col(ApiKey.org_id) == org_id).order_by(col(ApiKey.created_at), col(ApiKey.id))
    return list((await session.execute(stmt)).scalars())


async def touch_key(session: AsyncSession, key_id: uuid.UUID, now: datetime) -> None:
    """Set ``last_used_at`` to ``now`` unless it was set less than :data:`TOUCH_INTERVAL` ago."""
    await session.execute(
        update(ApiKey)
        .where(col(ApiKey.id) == key_id)
        .where((col(ApiKey.last_used_at).is_(None)) | (col(ApiKey.last_used_at) < now - TOUCH_INTERVAL))
        .values(last_used_at=now)
    )
