"""Tenants and API keys: create orgs, issue/verify/revoke keys."""

from __future__ import annotations

import difflib
import re
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, String, cast, func, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from elephantasm.db.models import ApiKey, Org
from elephantasm.domain.errors import ConflictError, NotFoundError
from elephantasm.domain.keys import KeyScope, minted_limits
from elephantasm.ids import SHORT_ID_DIGITS
from elephantasm.security import display_prefix, generate_api_key, hash_api_key


@dataclass(frozen=True)
class Caller:
    """Who is calling: the org every query is scoped to, the key used, what it may do, until when."""

    org_id: uuid.UUID
    key_id: uuid.UUID
    scope: KeyScope = KeyScope.ADMIN
    expires_at: datetime | None = None

    def expired(self, now: datetime) -> bool:
        """Whether the key has expired at ``now`` (a cached caller is checked on every request)."""
        return self.expires_at is not None and self.expires_at <= now


@dataclass(frozen=True)
class IssuedKey:
    """A freshly created key; ``key`` is shown once and never stored."""

    id: uuid.UUID
    org_id: uuid.UUID
    org_name: str
    key: str
    prefix: str
    expires_at: datetime | None
    scope: KeyScope = KeyScope.ADMIN


async def get_or_create_org(session: AsyncSession, name: str) -> Org:
    """The org called ``name``, created if new (concurrent callers get the same org, never an error)."""
    await session.execute(
        pg_insert(Org).values(id=uuid.uuid4(), name=name).on_conflict_do_nothing(index_elements=["name"])
    )
    return (await session.execute(select(Org).where(col(Org.name) == name))).scalar_one()


_SHORT_ID = re.compile(rf"[0-9a-fA-F]{{{SHORT_ID_DIGITS}}}")
ORGS_NAMED = 20
"""How many existing orgs an unknown-org error lists."""
ORGS_SEARCHED = 10_000
"""How many org names an unknown-org error looks through for close matches."""


async def get_org(session: AsyncSession, name: str) -> Org:
    """The org called ``name``; a NotFoundError naming the closest and the first few orgs otherwise.

    Only ``keys create`` makes orgs: elsewhere a mistyped ``--org`` must not quietly start a new,
    empty tenant.
    """
    org = (await session.execute(select(Org).where(col(Org.name) == name))).scalar_one_or_none()
    if org is not None:
        return org
    names = list((await session.execute(select(col(Org.name)).order_by(col(Org.name)).limit(ORGS_SEARCHED))).scalars())
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    hint = f"did you mean {' or '.join(map(repr, close))}? " if close else ""
    known = ", ".join(map(repr, names[:ORGS_NAMED])) + (", …" if len(names) > ORGS_NAMED else "")
    raise NotFoundError(
        f"org {name!r} not found; {hint}orgs: {known or 'none yet'} (`elephantasm keys create --org {name}` creates it)"
    )


async def create_key(
    session: AsyncSession,
    secret: bytes,
    org_name: str,
    name: str | None = None,
    expires_at: datetime | None = None,
    scope: KeyScope = KeyScope.ADMIN,
) -> IssuedKey:
    """Issue a new key for ``org_name`` (creating the org if new): the operator's path (CLI, bootstrap)."""
    org = await get_or_create_org(session, org_name)
    key, row = await issue_key(session, secret, org.id, name, expires_at, scope)
    return IssuedKey(row.id, org.id, org.name, key, row.prefix, expires_at, scope)


async def issue_key(
    session: AsyncSession,
    secret: bytes,
    org_id: uuid.UUID,
    name: str | None,
    expires_at: datetime | None,
    scope: KeyScope = KeyScope.ADMIN,
    created_by: uuid.UUID | None = None,
) -> tuple[str, ApiKey]:
    """Issue a key for an existing org; returns the clear key (shown once) and the stored row."""
    key = generate_api_key()
    row = ApiKey(
        org_id=org_id,
        name=name,
        prefix=display_prefix(key),
        key_hash=hash_api_key(key, secret),
        expires_at=expires_at,
        scope=scope.value,
        created_by=created_by,
    )
    session.add(row)
    await session.flush()
    await session.refresh(row)
    return key, row


async def mint_key(
    session: AsyncSession,
    secret: bytes,
    minter: Caller,
    name: str | None,
    scope: KeyScope | None,
    expires_at: datetime | None,
    now: datetime,
) -> tuple[str, ApiKey]:
    """A key minted by ``minter`` for its own org: no more powerful and no longer-lived than it
    (see :func:`elephantasm.domain.keys.minted_limits`)."""
    scope, expires_at = minted_limits(minter.scope, minter.expires_at, scope, expires_at, now)
    return await issue_key(session, secret, minter.org_id, name, expires_at, scope, minter.key_id)


async def verify_key(session: AsyncSession, digest: str, now: datetime) -> Caller | None:
    """The caller whose key hashes to ``digest`` (see ``hash_api_key``), or None if unknown,
    revoked or expired."""
    row = (
        await session.execute(
            select(
                col(ApiKey.id), col(ApiKey.org_id), col(ApiKey.revoked_at), col(ApiKey.expires_at), col(ApiKey.scope)
            ).where(col(ApiKey.key_hash) == digest)
        )
    ).one_or_none()
    if row is None or row.revoked_at is not None:
        return None
    if row.expires_at is not None and row.expires_at <= now:
        return None
    return Caller(org_id=row.org_id, key_id=row.id, scope=KeyScope(row.scope), expires_at=row.expires_at)


async def list_keys(session: AsyncSession, org_name: str | None = None) -> list[tuple[ApiKey, str]]:
    """Keys (with their org's name), optionally of one org, oldest first."""
    stmt = (
        select(ApiKey, col(Org.name))
        .join(Org, col(Org.id) == col(ApiKey.org_id))
        .order_by(col(ApiKey.created_at), col(ApiKey.id))
    )
    if org_name is not None:
        stmt = stmt.where(col(Org.name) == org_name)
    return [(k, n) for k, n in (await session.execute(stmt)).all()]


def _key_reference(ref: str) -> ColumnElement[bool]:
    """Which keys ``ref`` names: a full id, the short id listings show (its last 8 hex digits,
    ``ids.short_id``), or the display prefix (``sk_live_…``)."""
    try:
        return col(ApiKey.id) == uuid.UUID(ref)
    except ValueError:
        pass
    if _SHORT_ID.fullmatch(ref):
        return cast(col(ApiKey.id), String).endswith(ref.lower())
    return col(ApiKey.prefix) == ref


async def revoke_key(session: AsyncSession, key_ref: str, org_id: uuid.UUID | None = None) -> ApiKey:
    """Revoke an active key by id, short id or display prefix; scoped to ``org_id`` when given.

    A reference that names several active keys revokes none: the error lists them.
    """
    stmt = select(ApiKey).where(col(ApiKey.revoked_at).is_(None), _key_reference(key_ref))
    if org_id is not None:
        stmt = stmt.where(col(ApiKey.org_id) == org_id)
    found = list((await session.execute(stmt.limit(10).with_for_update())).scalars())
    if not found:
        raise NotFoundError(f"no active API key {key_ref!r}")
    if len(found) > 1:
        ids = ", ".join(str(k.id) for k in found)
        raise ConflictError(f"{key_ref!r} names several active keys ({ids}); give the full id")
    revoke = update(ApiKey).where(col(ApiKey.id) == found[0].id).values(revoked_at=func.now()).returning(ApiKey)
    return (await session.execute(revoke)).scalars().one()


async def count_keys(session: AsyncSession) -> int:
    """How many keys exist at all (used to bootstrap a first key on an empty database)."""
    return (await session.execute(select(func.count()).select_from(ApiKey))).scalar_one()


async def list_org_keys(session: AsyncSession, org_id: uuid.UUID) -> list[ApiKey]:
    """Keys of one org, oldest first."""
    stmt = select(ApiKey).where(col(ApiKey.org_id) == org_id).order_by(col(ApiKey.created_at), col(ApiKey.id))
    return list((await session.execute(stmt)).scalars())


async def touch_key(session: AsyncSession, key_id: uuid.UUID, now: datetime) -> None:
    """Record that a key was used; at most one write per key per minute, so auth stays cheap."""
    await session.execute(
        update(ApiKey)
        .where(col(ApiKey.id) == key_id)
        .where((col(ApiKey.last_used_at).is_(None)) | (col(ApiKey.last_used_at) < now - timedelta(minutes=1)))
        .values(last_used_at=now)
    )
