"""Inspector sign-in: the org behind an API key, looked up by the key's id on every page.

The browser never holds the key: its session cookie names the key's id (signed by the server, see
``api/ui/session.py``), and each request checks here that the key is still active, so revoking or
expiring a key ends its inspector sessions at once, on every replica.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from elephantasm.domain.keys import KeyScope
from elephantasm.services.keys import Caller

_KEY_SQL = text("""
SELECT k.id, k.org_id, k.prefix, k.scope, k.revoked_at, k.expires_at, o.name
FROM api_keys k JOIN orgs o ON o.id = k.org_id WHERE k.id = :id
""")


async def active_key(session: AsyncSession, key_id: uuid.UUID, now: datetime) -> tuple[Caller, str, str] | None:
    """``(caller, org name, key prefix)`` for an active key (not revoked, not expired), else None.
    The caller carries the key's scope and expiry, exactly as an API request with that key would."""
    row = (await session.execute(_KEY_SQL, {"id": key_id})).one_or_none()
    if row is None or row.revoked_at is not None or (row.expires_at is not None and row.expires_at <= now):
        return None
    caller = Caller(org_id=row.org_id, key_id=row.id, scope=KeyScope(row.scope), expires_at=row.expires_at)
    return caller, row.name, row.prefix
