"""Postgres full-text match and ``ts_rank`` of one text against OR-ed query lexemes, in Python.

Events store no tsvector: Postgres turns an event's text into lexemes once
(``to_tsvector``, its own parser, stemmer and stop words), the compile keeps their counts, and
this module gives the same match and the same ``ts_rank`` as the SQL the pack candidates use on
memories, bit for bit:

* ``fts @@ q_any`` — some query lexeme occurs; ``q_any`` is the OR of the query's lexemes;
* ``fts @@ q_arm`` — the full-text arm's stricter match: with three or more lexemes, at least
  two of them (the OR of every AND-ed pair), otherwise ``q_any``;
* ``ts_rank(fts, q_any)`` — PostgreSQL's ``calc_rank_or`` (``src/backend/utils/adt/tsrank.c``)
  with the default weights, normalisation 0 and no position weights (``to_tsvector`` assigns
  none): per matched lexeme with ``n`` positions ``(w + Σ_{j<n} w/(j+1)² − w) / 1.64493406685``
  with ``w = 0.1``, summed over the query's distinct lexemes in byte order and divided by their
  number. Postgres computes in C ``float`` except the division by the constant (a ``double``);
  every step here is rounded to float32 the same way, so the rank is the same float Postgres
  returns. Pure.
"""

from __future__ import annotations

import functools
import re
import struct
from collections.abc import Mapping, Sequence

Counts = Mapping[str, int]
"""Lexeme → number of positions, of one text's ``to_tsvector``."""

_F32 = struct.Struct("f")
_MAX_POSITIONS = 256  # MAXNUMPOS: to_tsvector keeps at most this many positions per lexeme
_PI2_6 = 1.64493406685  # the double literal of tsrank.c (Σ 1/i² = π²/6)


def _f32(x: float) -> float:
    """``x`` rounded to the nearest float32 (a single +, −, × or ÷ of floats done in double and
    rounded once is the correctly rounded float result)."""
    return float(_F32.unpack(_F32.pack(x))[0])


def _contribution(n: int) -> float:
    """The double one lexeme with ``n`` positions adds to the rank (before it is rounded in)."""
    w = _f32(0.1)  # default_weights[D]: to_tsvector positions carry weight D
    resj = 0.0
    for j in range(n):
        resj = _f32(resj + _f32(w / ((j + 1) * (j + 1))))
    # wjm = w at jm = 0 (every weight is equal, so the first position is the maximum).
    return _f32(_f32(w + resj) - w) / _PI2_6


_CONTRIBUTION = [0.0] + [_contribution(n) for n in range(1, _MAX_POSITIONS + 1)]


def query_order(lexemes: Sequence[str]) -> tuple[str, ...]:
    """The query's distinct lexemes in the order ``ts_rank`` visits them (bytewise, as
    ``SortAndUniqItems`` sorts the operands); rounding makes the order matter."""
    return tuple(sorted(set(lexemes), key=lambda s: s.encode()))


def ranked(texts: Sequence[Counts], lexemes: Sequence[str]) -> list[tuple[float, bool]]:
    """``(ts_rank, fts @@ q_arm)`` of each text, both as the module doc defines them; the rank is
    ``CASE WHEN fts @@ q_any THEN ts_rank(fts, q_any) ELSE 0 END`` (0.0 without lexemes or a match).

    A compile ranks every pending event of an anima; most match no query lexeme, and those that
    do share few patterns, so each distinct pattern (the counts of the query's lexemes, in order)
    is computed once.
    """
    if not lexemes:
        return [(0.0, False)] * len(texts)
    ordered = query_order(lexemes)
    need = 2 if len(lexemes) >= 3 else 1
    miss = (0.0, False)
    return [
        miss if counts.keys().isdisjoint(ordered) else _scored(tuple(map(counts.get, ordered)), need)
        for counts in texts
    ]


@functools.lru_cache(maxsize=4096)
def _scored(pattern: tuple[int | None, ...], need: int) -> tuple[float, bool]:
    res = 0.0
    for n in pattern:
        if n:
            res = _f32(res + _CONTRIBUTION[min(n, _MAX_POSITIONS)])
    return _f32(res / len(pattern)), sum(1 for n in pattern if n) >= need


# tsvector's text form: 'lexeme':1,4 'other':2 — quotes and backslashes inside a lexeme doubled.
_ENTRY = re.compile(r"'((?:''|\\\\|[^'\\])*)'(?::([0-9A-D,]+))?")
_ESCAPE = re.compile(r"''|\\\\")


def parse_tsvector(text: str) -> dict[str, int]:
    """Lexeme counts from a tsvector's text output (``to_tsvector(...)::text``)."""
    out: dict[str, int] = {}
    for lexeme, positions in _ENTRY.findall(text):
        if "'" in lexeme or "\\" in lexeme:
            lexeme = _ESCAPE.sub(lambda m: m.group(0)[0], lexeme)
        out[lexeme] = positions.count(",") + 1 if positions else 1
    return out
