"""pgvector helpers shared by the services that pass vectors through raw SQL."""

from __future__ import annotations

from collections.abc import Sequence


def vector_literal(vector: Sequence[float]) -> str:
    """A pgvector text literal (``[x,y,…]``), castable to ``vector`` or ``halfvec`` in SQL."""
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"
