"""Keyset pagination over (timestamp, id): the one implementation every list endpoint uses.

A page is the ``limit`` rows after the cursor's (timestamp, id), plus the cursor of its last row when
more follow: stable under inserts and index-friendly. A cursor is that position (24 bytes) and a
truncated HMAC under a key derived from the server secret, base64url-encoded: decoding parses
nothing a client wrote, so an altered or hand-made cursor is a 422 naming ``cursor``, never a crash.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
import struct
import uuid
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

from sqlalchemy import DateTime, Select, and_, cast, literal, or_
from sqlalchemy.ext.asyncio import AsyncSession

from elephantasm.domain.errors import ValidationError

CURSOR_KEY_INFO = "elephantasm.cursor_key"
"""The ``Session.info`` entry holding the cursor key (``Runtime`` sets it on every session)."""

_POSITION = struct.Struct(">q16s")  # microseconds since the epoch (UTC), the row id's 16 bytes
_MAC_BYTES = 16
_CURSOR_CHARS = len(base64.urlsafe_b64encode(bytes(_POSITION.size + _MAC_BYTES)).rstrip(b"="))
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# Sessions made outside a runtime (one-off tools): their cursors hold within this process only.
_PROCESS_KEY = secrets.token_bytes(32)
_BAD_CURSOR = "cursor: not a cursor this server issued (malformed or altered); start again without a cursor"


def cursor_key(secret: bytes) -> bytes:
    """The key cursors are signed with, derived from the server secret (never the secret itself)."""
    return hmac.new(secret, b"elephantasm keyset cursor", hashlib.sha256).digest()


def _mac(key: bytes, position: bytes) -> bytes:
    return hmac.new(key, position, hashlib.sha256).digest()[:_MAC_BYTES]


def encode_cursor(at: datetime, row_id: uuid.UUID, key: bytes) -> str:
    """An opaque, signed keyset cursor over (timestamp, id); ``at`` must be timezone-aware."""
    position = _POSITION.pack((at - _EPOCH) // timedelta(microseconds=1), row_id.bytes)
    return base64.urlsafe_b64encode(position + _mac(key, position)).decode().rstrip("=")


def decode_cursor(cursor: str, key: bytes) -> tuple[datetime, uuid.UUID]:
    """Inverse of :func:`encode_cursor`; anything else (malformed, altered, signed with another key)
    is a 422 naming ``cursor``."""
    if len(cursor) != _CURSOR_CHARS:
        raise ValidationError(_BAD_CURSOR)
    try:
        raw = base64.b64decode(cursor + "=" * (-len(cursor) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError):
        raise ValidationError(_BAD_CURSOR) from None
    position, mac = raw[: _POSITION.size], raw[_POSITION.size :]
    canonical = base64.urlsafe_b64encode(raw).decode().rstrip("=") == cursor  # no other spelling of it
    if not (canonical and hmac.compare_digest(mac, _mac(key, position))):
        raise ValidationError(_BAD_CURSOR)
    micros, row_id = _POSITION.unpack(position)
    return _EPOCH + timedelta(microseconds=micros), uuid.UUID(bytes=row_id)


# asyncpg sends datetime.min and datetime.max as -infinity and infinity: a row stored at either
# (written before the instant window existed) would then never be paged past.
_INFINITY_ALIASES = (datetime.min.replace(tzinfo=UTC), datetime.max.replace(tzinfo=UTC))


def _bindable(at: datetime, row_id: uuid.UUID) -> tuple[Any, uuid.UUID]:
    """The cursor's instant as a bound value Postgres reads as that instant (text for the two
    instants the driver would send as an infinity)."""
    if at in _INFINITY_ALIASES:
        return cast(literal(at.isoformat()), DateTime(timezone=True)), row_id
    return at, row_id


def session_cursor_key(session: AsyncSession) -> bytes:
    """The cursor key of ``session``'s runtime (this process's own key for a bare session)."""
    key = session.info.get(CURSOR_KEY_INFO)
    return key if isinstance(key, bytes) else _PROCESS_KEY


class Direction(StrEnum):
    """Which way a list runs."""

    ASC = "asc"
    """Oldest first."""
    DESC = "desc"
    """Newest first."""


async def keyset_page(
    session: AsyncSession,
    stmt: Select,
    *,
    at: Any,
    row_id: Any,
    limit: int,
    cursor: str | None,
    direction: Direction,
    entities: bool = False,
) -> tuple[list[Any], str | None]:
    """Rows of ``stmt`` ordered by (``at``, ``row_id``) in ``direction``, after ``cursor``; plus the
    next page's cursor (None on the last page).

    ``entities`` returns the first column's objects (ORM entities, ``at`` one of their attributes)
    instead of rows, which must select the ``at`` expression labelled ``page_at``.
    """
    ascending = direction is Direction.ASC
    key = session_cursor_key(session)
    if cursor:
        c_at, c_id = _bindable(*decode_cursor(cursor, key))
        after = (
            or_(at > c_at, and_(at == c_at, row_id > c_id))
            if ascending
            else or_(at < c_at, and_(at == c_at, row_id < c_id))
        )
        stmt = stmt.where(after)
    order = (at.asc(), row_id.asc()) if ascending else (at.desc(), row_id.desc())
    result = await session.execute(stmt.order_by(*order).limit(limit + 1))
    rows = list(result.scalars() if entities else result.all())
    if len(rows) <= limit:
        return rows, None
    last = rows[limit - 1]
    return rows[:limit], encode_cursor(getattr(last, at.key if entities else "page_at"), last.id, key)
