"""Compact per-turn vectors: int8 storage keeps cosines, the best turn wins, the blend falls back."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from elephantasm.domain import turn_vectors as tv


def _unit(rng: np.random.Generator, dim: int) -> list[float]:
    v = rng.normal(size=dim)
    return list(v / np.linalg.norm(v))


def _best(query: np.ndarray, blob: bytes | None) -> tuple[float, str | None] | None:
    return tv.best_turns(query, [blob])[0]


def _cosine(query: np.ndarray, blob: bytes | None) -> float | None:
    best = _best(query, blob)
    return None if best is None else best[0]


def test_int8_rows_keep_cosines_and_take_a_quarter_of_float4() -> None:
    rng = np.random.default_rng(7)
    turns = [_unit(rng, 256) for _ in range(4)]
    blob = tv.encode(turns, 256)
    assert blob is not None and len(blob) == 4 + 4 * (2 + 256)  # header, (no) lines, one byte a component
    q = np.asarray(_unit(rng, 256), dtype=np.float32)
    exact = max(float(np.dot(q[:256], t)) for t in turns)
    assert math.isclose(_cosine(q, blob) or 0.0, exact, abs_tol=0.01)


def test_the_best_matching_turn_decides() -> None:
    dim = 8
    basis = [[1.0 if i == j else 0.0 for i in range(dim)] for j in range(3)]
    blob = tv.encode(basis, dim)
    q = np.asarray(basis[2], dtype=np.float32)
    assert _cosine(q, blob) == 1.0
    assert _cosine(np.asarray([0.0] * 7 + [1.0], dtype=np.float32), blob) == 0.0


def test_nothing_stored_or_unreadable_means_no_turn_signal() -> None:
    q = np.ones(4, dtype=np.float32) / 2
    assert tv.encode([], 4) is None
    assert _cosine(q, None) is None
    assert _cosine(q, b"\x09\x04\x00\x01" + bytes(10)) is None  # unknown format
    assert _cosine(q, b"\x01\x04\x00\x01" + bytes(9)) is None  # truncated row
    assert _cosine(q[:2], tv.encode([[0.5] * 4], 4)) is None  # query narrower than the rows


def test_at_most_max_turns_rows_are_kept() -> None:
    rows = [[1.0, 0.0]] * (tv.MAX_TURNS + 3)
    blob = tv.encode(rows, 2)
    assert blob is not None and len(blob) == 4 + tv.MAX_TURNS * (2 + 2)


@given(st.none() | st.floats(-1, 1), st.none() | st.floats(-1, 1))
def test_blend_uses_what_is_there(summary, turn) -> None:
    got = tv.blend(summary, turn)
    if summary is None or turn is None:
        assert got == (summary if turn is None else turn)
    else:
        assert min(summary, turn) - 1e-12 <= got <= max(summary, turn) + 1e-12


def test_the_best_turn_comes_with_its_line_in_the_content() -> None:
    lines = ["User: the printer jammed", "User: we adopted a puppy"]
    blob = tv.encode([[1.0, 0.0], [0.0, 1.0]], 2, lines)
    best = _best(np.asarray([0.1, 0.9], dtype=np.float32), blob)
    assert best is not None and best[1] == "User: we adopted a puppy"
    unknown = tv.encode([[1.0, 0.0]], 2, [None])
    assert _best(np.asarray([1.0, 0.0], dtype=np.float32), unknown) == (1.0, None)


def test_scoring_every_blob_at_once_equals_one_by_one() -> None:
    rng = np.random.default_rng(3)
    blobs = [
        tv.encode([_unit(rng, 16) for _ in range(n)], 16, [f"line {i}.{j}" for j in range(n)]) if n else None
        for i, n in enumerate([3, 0, 1, 5, 2])
    ]
    blobs.append(b"\x09junk")
    q = np.asarray(_unit(rng, 16), dtype=np.float32)
    together = tv.best_turns(q, blobs)
    alone = [_best(q, b) for b in blobs]
    assert [None if t is None else t[1] for t in together] == [None if a is None else a[1] for a in alone]
    for t, a in zip(together, alone, strict=True):
        assert (t is None) == (a is None)
        if t is not None and a is not None:
            assert math.isclose(t[0], a[0], abs_tol=1e-5)


def test_each_turn_carries_its_line() -> None:
    dim = 4
    basis = [[1.0 if i == j else 0.0 for i in range(dim)] for j in range(3)]
    lines = ["User: café at 9", None, "User: tram 28"]
    blob = tv.encode(basis, dim, lines=lines)
    assert blob is not None and blob[0] == tv.FORMAT_INT8_LINES
    assert len(blob) == 4 + sum(2 + len((line or "").encode()) + dim for line in lines)
    q = np.asarray(basis[2], dtype=np.float32)
    assert _best(q, blob) == (1.0, "User: tram 28")
    assert _best(np.asarray(basis[1], dtype=np.float32), blob) == (1.0, None)
    assert tv.best_turns(np.asarray(basis[0], dtype=np.float32), [blob, None]) == [(1.0, "User: café at 9"), None]
    assert _cosine(q, blob[:-1]) is None  # truncated body
    assert _cosine(q, blob[:6]) is None  # truncated inside a line
