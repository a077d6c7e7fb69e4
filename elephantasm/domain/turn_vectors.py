"""Per-turn vectors of a memory, stored compactly, for multi-vector relevance.

A memory distils an exchange of several turns, often noisy and about several threads at once; one
vector for its summary dilutes each fact in it, where a vector per turn keeps it sharp. So the
dreamer also embeds the memory's fact-bearing turns (the user's, without filler) and stores them
as one small blob: a header (format byte, dimension) and one int8 row per turn, each row scaled
so its largest component is ±127. At 256 dimensions a turn costs 256 bytes (a float4 vector:
1,024). Quantisation barely moves cosines of unit vectors (≈0.003 for 256-d), far less than the
gaps relevance ranks on.

At compile time a memory's relevance cosine is :func:`blend` of its summary cosine and its best
turn's cosine (:func:`max_turn_cosine`). Pure: numpy only, no I/O.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np

FORMAT_INT8 = 1
_HEADER = struct.Struct("<BH")  # format, dimension
# At most this many turn vectors per memory (exchanges are ≤ 8 turns; the user's are about half).
MAX_TURNS = 8
# Weight of the best turn's cosine in a memory's relevance cosine; the summary keeps the rest.
# Measured on the quality benchmark (summary only, best turn only, 0.5/0.5, max of both): the
# even blend was best or level at every budget.
TURN_WEIGHT = 0.5


def encode(vectors: Sequence[Sequence[float]], dim: int) -> bytes | None:
    """The first ``dim`` components of each vector as int8 rows (None when there are none)."""
    rows = [v[:dim] for v in vectors[:MAX_TURNS] if len(v) >= dim]
    if not rows or dim <= 0 or dim > 0xFFFF:
        return None
    m = np.asarray(rows, dtype=np.float64)
    scale = np.abs(m).max(axis=1, keepdims=True)
    scale[scale == 0] = 1.0
    q = np.rint(m * (127.0 / scale)).astype(np.int8)
    return _HEADER.pack(FORMAT_INT8, dim) + q.tobytes()


def decode(blob: bytes) -> np.ndarray | None:
    """Rows of unit vectors (float32, n × dim), or None for an empty or unknown blob."""
    if len(blob) <= _HEADER.size:
        return None
    fmt, dim = _HEADER.unpack_from(blob)
    body = len(blob) - _HEADER.size
    if fmt != FORMAT_INT8 or dim == 0 or body % dim:
        return None
    m = np.frombuffer(blob, dtype=np.int8, offset=_HEADER.size).reshape(-1, dim).astype(np.float32)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return m / norms


def max_turn_cosine(query: np.ndarray, blob: bytes | None) -> float | None:
    """The best cosine of ``query`` (a unit vector, at least ``dim`` long) to the stored turns."""
    if not blob:
        return None
    rows = decode(bytes(blob))
    if rows is None or query.shape[0] < rows.shape[1]:
        return None
    return float((rows @ query[: rows.shape[1]]).max())


def blend(summary_cosine: float | None, turn_cosine: float | None) -> float | None:
    """A memory's relevance cosine: summary and best turn mixed by :data:`TURN_WEIGHT`.

    Either alone when the other is missing (no stored turns, or a vector of another space).
    """
    if turn_cosine is None:
        return summary_cosine
    if summary_cosine is None:
        return turn_cosine
    return (1.0 - TURN_WEIGHT) * summary_cosine + TURN_WEIGHT * turn_cosine
