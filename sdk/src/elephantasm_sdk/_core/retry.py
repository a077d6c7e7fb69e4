"""Retry policy: which failures to retry and how long to wait. Pure functions, no clock, no sleep."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx

#: Transport failures worth another attempt (the request may not have reached the server).
RETRYABLE_EXCEPTIONS: tuple[type[BaseException], ...] = (
    httpx.TimeoutException,
    httpx.NetworkError,
    httpx.RemoteProtocolError,
)


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded exponential backoff with jitter.

    Attributes:
        max_retries: Retries after the first attempt (0 disables retrying).
        initial_delay: Delay before the first retry, in seconds.
        max_delay: Cap on the computed backoff delay.
        jitter: Fraction of each delay that is randomised away (0 = none, 1 = full jitter).
        max_retry_after: Longest ``Retry-After`` we are willing to sleep; a longer one ends retrying.
    """

    max_retries: int = 2
    initial_delay: float = 0.5
    max_delay: float = 8.0
    jitter: float = 0.25
    max_retry_after: float = 60.0


def is_retryable_status(status: int) -> bool:
    """429 and every 5xx are transient; other statuses are the caller's problem."""
    return status == 429 or 500 <= status <= 599


def is_retryable_exception(exc: BaseException) -> bool:
    """Connection failures, timeouts and broken responses are retried; anything else is a bug."""
    return isinstance(exc, RETRYABLE_EXCEPTIONS)


def backoff_delay(policy: RetryPolicy, attempt: int, rand: float) -> float:
    """Exponential delay for retry number ``attempt`` (0-based), reduced by up to ``jitter``.

    ``rand`` is a number in [0, 1) supplied by the caller so this stays deterministic.
    """
    base = min(policy.max_delay, policy.initial_delay * float(2**attempt))
    return max(0.0, base * (1.0 - policy.jitter * rand))


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date), or None."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    now = now or datetime.now(UTC)
    return max(0.0, (when - now).total_seconds())


def next_delay(
    policy: RetryPolicy,
    attempt: int,
    *,
    rand: float,
    status: int | None = None,
    exc: BaseException | None = None,
    retry_after: float | None = None,
) -> float | None:
    """Decide whether to retry after a failed attempt, and how long to wait first.

    Args:
        policy: The retry policy in force.
        attempt: How many retries have already been made (0 after the first failure).
        rand: A random number in [0, 1) for jitter.
        status: The HTTP status received, if any.
        exc: The transport exception raised, if any.
        retry_after: The server's ``Retry-After`` in seconds, if it sent one.

    Returns:
        Seconds to sleep before the next attempt, or None to give up.
    """
    if attempt >= policy.max_retries:
        return None
    if exc is not None and not is_retryable_exception(exc):
        return None
    if status is not None and not is_retryable_status(status):
        return None
    if retry_after is not None:
        return retry_after if retry_after <= policy.max_retry_after else None
    return backoff_delay(policy, attempt, rand)
