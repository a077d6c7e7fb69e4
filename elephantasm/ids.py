"""Time-ordered row ids: UUID version 7 (RFC 9562), monotonic within this process.

A version 7 id starts with the time, so the bulk tables' new keys go to the right edge of their
B-tree (random ids split leaves anywhere); rows made one at a time (animas, keys) keep random ids.
Layout as Python 3.14's ``uuid.uuid7``: 48 bits ms, version, a 42-bit counter that starts random
each millisecond and counts up (on overflow or a clock going back the timestamp advances), variant,
32 random bits.
"""

from __future__ import annotations

import os
import threading
import time
import uuid

from asyncpg.pgproto.pgproto import UUID as DriverUUID

_COUNTER_BITS = 42
_COUNTER_MAX = (1 << _COUNTER_BITS) - 1
_VERSION_VARIANT = (0x7 << 76) | (0b10 << 62)

_lock = threading.Lock()
_last_ms = 0
_last_counter = 0


def _fresh_counter() -> int:
    # Top bit clear: at least 2**41 ids fit in the millisecond before the counter overflows.
    return int.from_bytes(os.urandom(6), "big") & (_COUNTER_MAX >> 1)


def _next_ints(n: int) -> list[int]:
    """The 128-bit values of ``n`` consecutive ids."""
    global _last_ms, _last_counter
    tails = os.urandom(4 * n)
    out: list[int] = []
    with _lock:
        ms, counter = _last_ms, _last_counter
        now = time.time_ns() // 1_000_000
        for i in range(n):
            if now > ms:
                ms, counter = now, _fresh_counter()
            elif counter < _COUNTER_MAX:
                counter += 1
            else:  # the millisecond is used up (or the clock went back): borrow the next one
                ms, counter = ms + 1, _fresh_counter()
            tail = int.from_bytes(tails[4 * i : 4 * i + 4], "big")
            out.append((ms << 80) | _VERSION_VARIANT | ((counter >> 30) << 64) | ((counter & 0x3FFFFFFF) << 32) | tail)
        _last_ms, _last_counter = ms, counter
    return out


def uuid7() -> uuid.UUID:
    """A new version 7 UUID, greater than every id made before it in this process."""
    return uuid.UUID(int=_next_ints(1)[0])


def new_batch(n: int) -> list[uuid.UUID]:
    """``n`` new version 7 UUIDs in increasing order, for the ingest's COPY path: one lock and one
    ``os.urandom`` call for the batch, as the driver's own UUID type (encoded without a conversion)."""
    return [DriverUUID(v.to_bytes(16, "big")) for v in _next_ints(n)]


SHORT_ID_DIGITS = 8


def short_id(value: object) -> str:
    """An id as people read it in tables: its last 8 hex digits, like git's short hashes.

    The *tail* distinguishes ids: a version 7 id starts with its creation time, so every id made in
    the same minute shares its first 8 digits, while its last 32 bits (and a version 4 id's) are
    random. Anything that is not a UUID is cut to its last 8 characters the same way.
    """
    text = str(value)
    try:
        return uuid.UUID(text).hex[-SHORT_ID_DIGITS:]
    except ValueError:
        return text[-SHORT_ID_DIGITS:]
