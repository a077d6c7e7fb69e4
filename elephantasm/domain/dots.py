"""Dot products of one query vector with many vectors, bit-identical to the scalar Python loop.

Relevance rounds cosines to 6 digits, so a cosine that differs in its last bit can flip a rounded
value and change a pack's bytes. ``numpy``'s ``dot``/``@`` sum in blocks (BLAS, pairwise, SIMD):
on the benchmark vectors 92 % of results differed from ``sum(map(mul, q, v))`` in the last bit.
Elementwise products are correctly rounded either way, and ``np.add.accumulate`` adds left to
right like CPython 3.11's ``sum`` over floats, so the last column of the running sum is the same
float the loop gives; only the matrix arithmetic is vectorised. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def sequential_dots(query: Sequence[float], rows: np.ndarray) -> list[float]:
    """``[sum(map(operator.mul, query, row)) for row in rows]``, computed in float64 with numpy.

    ``rows`` is a 2-D float64 array, one vector per row (none gives ``[]``); like ``map``, the
    shorter of the two widths is used.
    """
    if len(rows) == 0:
        return []
    q = np.asarray(query, dtype=np.float64)
    width = min(q.shape[0], rows.shape[1])
    running = np.add.accumulate(rows[:, :width] * q[:width], axis=1)
    # + 0.0: CPython's sum starts from the int 0, so it never returns -0.0; accumulate could.
    return (running[:, -1] + 0.0).tolist()
