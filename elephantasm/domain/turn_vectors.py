"""Per-turn vectors of a memory, stored compactly, for multi-vector relevance.

One vector for a memory's summary dilutes each fact of a several-turn exchange; a vector per
fact-bearing turn keeps it sharp. The blob: a header (format, dimension, rows), each turn's line
(UTF-8 after a 2-byte length, so a pack can show the turn that matched), then one int8 row per
turn scaled to ±127. A memory's relevance cosine is :func:`blend` of its summary's and its best
turn's (:func:`best_turns`). Pure: numpy only.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np

FORMAT_INT8_LINES = 2
_LINE_LEN = struct.Struct("<H")  # the turn's line, its UTF-8 length first (0: none)
_HEADER = struct.Struct("<BHB")  # format, dimension, rows
# At most this many turn vectors per memory (exchanges are ≤ 8 turns; the user's are about half).
MAX_TURNS = 8
# Weight of the best turn's cosine in a memory's relevance cosine; the summary keeps the rest (the
# even blend ranked best or level on the quality benchmark).
TURN_WEIGHT = 0.5


def encode(vectors: Sequence[Sequence[float]], dim: int, lines: Sequence[str | None] = ()) -> bytes | None:
    """The first ``dim`` components of each vector as int8 rows, with each turn's line (``None`` or
    missing: unknown). None when there are no vectors."""
    picked = [(v[:dim], lines[i] if i < len(lines) else None) for i, v in enumerate(vectors[:MAX_TURNS])]
    picked = [(v, line) for v, line in picked if len(v) == dim]
    if not picked or dim <= 0 or dim > 0xFFFF:
        return None
    m = np.asarray([v for v, _ in picked], dtype=np.float64)
    scale = np.abs(m).max(axis=1, keepdims=True)
    scale[scale == 0] = 1.0
    q = np.rint(m * (127.0 / scale)).astype(np.int8)
    head = _HEADER.pack(FORMAT_INT8_LINES, dim, len(picked))
    return head + b"".join(_line_bytes(line) for _, line in picked) + q.tobytes()


def _line_bytes(line: str | None) -> bytes:
    raw = line.encode() if line else b""
    if len(raw) > 0xFFFF:
        raw = b""  # far beyond any snippet a pack shows: not kept
    return _LINE_LEN.pack(len(raw)) + raw


def best_turns(query: np.ndarray, blobs: Sequence[bytes | None]) -> list[tuple[float, str | None] | None]:
    """For each blob, the best cosine of ``query`` (a unit vector, at least the blob's dimension long)
    to its stored turns and that turn's line; None for a blob without readable turns. One matrix
    product for a whole compile's candidates."""
    out: list[tuple[float, str | None] | None] = [None] * len(blobs)
    rows: list[bytes] = []
    owners: list[tuple[int, int, list[bytes | None]]] = []  # (blob index, row count, lines)
    for i, blob in enumerate(blobs):
        parsed = _parse(bytes(blob)) if blob else None
        if parsed is None or parsed[0] > query.shape[0]:
            continue
        dim, n, lines, body = parsed
        if owners and dim != len(rows[0]) // owners[0][1]:
            continue  # one dimension per compile (one embedding space)
        rows.append(body)
        owners.append((i, n, lines))
    if not owners:
        return out
    dim = len(rows[0]) // owners[0][1]
    m = np.frombuffer(b"".join(rows), dtype=np.int8).reshape(-1, dim).astype(np.float32)
    norms = np.linalg.norm(m, axis=1)
    norms[norms == 0] = 1.0
    cosines = (m @ query[:dim]) / norms
    at = 0
    for i, n, lines in owners:
        j = int(cosines[at : at + n].argmax())  # first of equal maxima: deterministic
        line = lines[j]  # decoded only for the turn that wins
        out[i] = (float(cosines[at + j]), None if line is None else line.decode(errors="replace"))
        at += n
    return out


def _parse(blob: bytes) -> tuple[int, int, list[bytes | None], bytes] | None:
    """(dimension, rows, lines, int8 body) of a readable blob."""
    if len(blob) < _HEADER.size:
        return None
    fmt, dim, n = _HEADER.unpack_from(blob)
    if fmt != FORMAT_INT8_LINES or dim == 0 or n == 0:
        return None
    got = _lines(blob, n)
    if got is None or len(blob) != got[1] + n * dim:
        return None
    return dim, n, got[0], blob[got[1] :]


def _lines(blob: bytes, n: int) -> tuple[list[bytes | None], int] | None:
    """The blob's ``n`` lines and where the int8 body starts (None when the blob is too short)."""
    lines: list[bytes | None] = []
    at = _HEADER.size
    for _ in range(n):
        if at + _LINE_LEN.size > len(blob):
            return None
        (size,) = _LINE_LEN.unpack_from(blob, at)
        at += _LINE_LEN.size
        if at + size > len(blob):
            return None
        lines.append(blob[at : at + size] if size else None)
        at += size
    return lines, at


def blend(summary_cosine: float | None, turn_cosine: float | None) -> float | None:
    """A memory's relevance cosine: summary and best turn mixed by :data:`TURN_WEIGHT`.

    Either alone when the other is missing (no stored turns, or a vector of another space).
    """
    if turn_cosine is None:
        return summary_cosine
    if summary_cosine is None:
        return turn_cosine
    return (1.0 - TURN_WEIGHT) * summary_cosine + TURN_WEIGHT * turn_cosine
