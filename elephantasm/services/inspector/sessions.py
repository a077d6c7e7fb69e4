"""Inspector sign-in: the org behind an API key, looked up by the key's id on every page.

The browser never holds the key: its session cookie names the key's id (signed by the server, see
``api/ui/session.py``), and each request checks here that the key is still active, so revoking or
expiring a key ends its inspector sessions at once, on every replica.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from elephantasm.db.models import ApiKey, Org
from elephantasm.services.keys import Caller


async def active_key(session: AsyncSession, key_id: uuid.UUID, now: datetime) -> tuple[Caller, str, str] | None:
    """``(caller, org name, key prefix)`` for an active key (not revoked, not expired), else None."""
    row = (
        await session.execute(
            select(ApiKey.id, ApiKey.org_id, ApiKey.prefix, ApiKey.revoked_at, ApiKey.expires_at, Org.name)
            .join(Org, Org.id == ApiKey.org_id)
            .where(ApiKey.id == key_id)
        )
    ).one_or_none()
    if row is None or row.revoked_at is not None or (row.expires_at is not None and row.expires_at <= now):
        return None
    return Caller(org_id=row.org_id, key_id=row.id), row.name, row.prefix
