"""Python's ``round(x, digits)`` for a whole array of floats at once, bit for bit.

``round(x, 6)`` on a float is correctly rounded: the double nearest to ``x``'s exact binary value
rounded half-even to 6 decimals. CPython computes it through a decimal string (~0.3-0.6 µs each),
and a compile rounds a few thousand relevance values. numpy's own ``np.round`` scales, rounds and
divides, which differs from it in rare cases. :func:`round_many` takes the same fast path but only
where it provably agrees, and calls ``round`` for the rest:

- ``y = x * 10**digits`` is within half an ulp of the exact product; for ``|x| < 1e3`` (and digits
  <= 6) that is below 1e-7, so unless the exact product lies within 1e-6 of a half-integer,
  ``rint(y)`` is the same integer ``n`` that ``round`` picks;
- ``n / 10**digits`` is then one correctly rounded division of two exact doubles: the double
  nearest to ``n·10^-digits``, which is what ``round`` returns;
- ``rint`` keeps the sign of a zero (``round(-1e-9, 6)`` is ``-0.0``), and NaN, infinities and
  large or near-half values take ``round`` itself.
"""

from __future__ import annotations

import numpy as np

# Beyond these the half-ulp bound above no longer holds with room to spare: round() decides.
_MAX_DIGITS = 6
_MAX_MAGNITUDE = 1e3
_TIE_MARGIN = 1e-6


def round_many(values: np.ndarray, digits: int) -> np.ndarray:
    """``[round(float(v), digits) for v in values]`` as a float64 array, equal bit for bit."""
    x = np.asarray(values, dtype=np.float64)
    if not 0 <= digits <= _MAX_DIGITS:
        return np.array([round(float(v), digits) for v in x], dtype=np.float64)
    scale = 10.0**digits
    y = x * scale
    with np.errstate(invalid="ignore"):  # NaN and infinities fail the test below and take round()
        safe = (np.abs(x) < _MAX_MAGNITUDE) & (np.abs(y - np.floor(y) - 0.5) > _TIE_MARGIN)
    out = np.where(safe, np.rint(y) / scale, x)
    for i in np.flatnonzero(~safe).tolist():
        out[i] = round(float(x[i]), digits)
    return out
