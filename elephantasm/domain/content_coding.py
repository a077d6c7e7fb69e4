"""Response content coding (RFC 9110 §12.5.3): whether a client's ``Accept-Encoding`` allows gzip.

Pure: the API asks it per request; packs keep a gzip copy of their bytes next to the JSON, so a
hit for a gzip-accepting client costs no compression.
"""

from __future__ import annotations

import gzip

_GZIP_NAMES = frozenset({"gzip", "x-gzip"})
# Compressed once per cached pack and then served many times: the default level is worth its time.
_LEVEL = 6


def _weight(params: list[str]) -> float:
    """The ``q`` of one Accept-Encoding member; 1 when absent, 0 when malformed (never guess yes)."""
    for param in params:
        name, _, value = param.partition("=")
        if name.strip().lower() == "q":
            try:
                q = float(value.strip())
            except ValueError:
                return 0.0
            return q if 0.0 <= q <= 1.0 else 0.0
    return 1.0


def accepts_gzip(accept_encoding: str | None) -> bool:
    """Whether gzip may be sent: ``gzip``/``x-gzip`` with q > 0, else ``*`` with q > 0.

    An explicit ``gzip;q=0`` refuses it even when ``*`` is allowed; no header means identity only
    (the conservative reading: a client that says nothing gets plain JSON).
    """
    if not accept_encoding:
        return False
    star: float | None = None
    for member in accept_encoding.split(","):
        coding, *params = member.split(";")
        name = coding.strip().lower()
        if name in _GZIP_NAMES:
            return _weight(params) > 0.0
        if name == "*":
            star = _weight(params)
    return star is not None and star > 0.0


def gzip_bytes(body: bytes) -> bytes:
    """``body`` gzipped deterministically (no timestamp in the header: same bytes → same output)."""
    return gzip.compress(body, compresslevel=_LEVEL, mtime=0)
