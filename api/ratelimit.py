"""Failed-authentication rate limit per client address.

A sliding window per address, in process memory: each replica limits on its own (an attacker
spread over N replicas gets N times the budget, still far too few guesses against 256-bit keys;
the point is to stop hammering). While an address is over the limit every authenticated request
from it is refused with 429 and ``Retry-After``, a good key included, so guessing cannot go on
behind a valid one. The client address is the socket peer; behind a proxy named in
``forwarded_allow_ips``, the client its ``X-Forwarded-For`` names (``api/forwarded.py``).
"""

from __future__ import annotations

import math
import time
from collections import deque

from elephantasm.domain.errors import RateLimitedError

_MAX_ADDRESSES = 100_000


class FailedAuthLimiter:
    """At most ``limit`` failed authentications per address per ``window`` seconds."""

    def __init__(self, limit: int, window: float) -> None:
        self.limit = limit
        self.window = window
        self._failures: dict[str, deque[float]] = {}

    def _recent(self, address: str, now: float) -> deque[float] | None:
        times = self._failures.get(address)
        while times and times[0] <= now - self.window:
            times.popleft()
        if times is not None and not times:
            del self._failures[address]
            return None
        return times

    def check(self, address: str) -> None:
        """RateLimitedError while ``address`` has used up its failures in the current window."""
        now = time.monotonic()
        times = self._recent(address, now)
        if times is not None and len(times) >= self.limit:
            retry_after = max(1, math.ceil(times[0] + self.window - now))
            raise RateLimitedError(
                f"too many failed authentication attempts from this address; retry in {retry_after} s",
                retry_after,
            )

    def record_failure(self, address: str) -> None:
        """Count one failed authentication from ``address``."""
        if len(self._failures) >= _MAX_ADDRESSES:
            self._failures.clear()  # bounded memory under an address-spraying flood
        self._failures.setdefault(address, deque()).append(time.monotonic())
