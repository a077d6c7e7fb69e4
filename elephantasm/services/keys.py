"""Tenants and API keys: create orgs, issue/verify/revoke keys."""

from __future__ import annotations

import difflib
import re
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from elephantasm.db.models import ApiKey, Org
from elephantasm.db.queries import keys as q
from elephantasm.db.tables import inserted
from elephantasm.domain.errors import ConflictError, NotFoundError
from elephantasm.domain.keys import KeyScope, minted_limits
from elephantasm.ids import SHORT_ID_DIGITS
from elephantasm.security import display_prefix, generate_api_key, hash_api_key

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession


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


# Reads and writes with no rule of their own are the queries themselves (``db/queries/keys.py``).
get_or_create_org = q.add_org_if_new
list_keys = q.keys_with_org_names
count_keys = q.count_keys
list_org_keys = q.keys_of_org
touch_key = q.touch_key
org_name = q.org_name

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
    org = await q.org_named(session, name)
    if org is not None:
        return org
    names = await q.org_names(session, ORGS_SEARCHED)
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
    row = await inserted(
        session,
        ApiKey(
            org_id=org_id,
            name=name,
            prefix=display_prefix(key),
            key_hash=hash_api_key(key, secret),
            expires_at=expires_at,
            scope=scope.value,
            created_by=created_by,
        ),
    )
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
    found = _active(await q.key_by_hash(session, digest), now)
    return found[0] if found else None


async def active_key(session: AsyncSession, key_id: uuid.UUID, now: datetime) -> tuple[Caller, str, str] | None:
    """``(caller, org name, key prefix)`` of the key ``key_id`` if it is active (not revoked, not
    expired), else None: the inspector's sign-in, checked on every page, so revoking or expiring a
    key ends its inspector sessions at once, on every replica (``api/ui/session.py``)."""
    return _active(await q.key_by_id(session, key_id), now)


def _active(row: Any, now: datetime) -> tuple[Caller, str, str] | None:
    """The caller of a key row read by ``db/queries/keys``, its org name and prefix; None unless
    the key is active. The caller carries the key's scope and expiry."""
    if row is None or row.revoked_at is not None or (row.expires_at is not None and row.expires_at <= now):
        return None
    caller = Caller(org_id=row.org_id, key_id=row.id, scope=KeyScope(row.scope), expires_at=row.expires_at)
    return caller, row.name, row.prefix


def _key_reference(ref: str) -> tuple[uuid.UUID | None, str | None, str | None]:
    """Which keys ``ref`` names: a full id, the short id listings show (its last 8 hex digits,
    ``ids.short_id``), or the display prefix (``sk_live_…``)."""
    try:
        return uuid.UUID(ref), None, None
    except ValueError:
        pass
    if _SHORT_ID.fullmatch(ref):
        return None, ref.lower(), None
    return None, None, ref


async def revoke_key(session: AsyncSession, key_ref: str, org_id: uuid.UUID | None = None) -> ApiKey:
    """Revoke an active key by id, short id or display prefix; scoped to ``org_id`` when given.

    A reference that names several active keys revokes none: the error lists them.
    """
    found = await q.lock_active_keys(session, org_id, 10, *_key_reference(key_ref))
    if not found:
        raise NotFoundError(f"no active API key {key_ref!r}")
    if len(found) > 1:
        ids = ", ".join(str(k.id) for k in found)
        raise ConflictError(f"{key_ref!r} names several active keys ({ids}); give the full id")
    return await q.revoke(session, found[0].id)
