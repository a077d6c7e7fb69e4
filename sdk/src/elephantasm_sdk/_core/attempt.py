"""What to do after one attempt: return, retry after a delay, or raise. Pure."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import httpx

from ..exceptions import APIConnectionError, APITimeoutError, ElephantasmError
from .request import RawResponse
from .response import error_from_response
from .retry import RetryPolicy, next_delay, parse_retry_after


@dataclass(frozen=True)
class Step:
    """The decision after an attempt.

    ``retry_in`` set: sleep that long and try again. Otherwise ``error`` set: raise it; neither set:
    the response is a success and should be parsed.
    """

    retry_in: float | None = None
    error: ElephantasmError | None = None


def connection_error(exc: BaseException) -> APIConnectionError:
    """Wrap a transport failure in the SDK's exception type."""
    cls = APITimeoutError if isinstance(exc, httpx.TimeoutException) else APIConnectionError
    return cls(f"{cls.default_message}: {type(exc).__name__}: {exc}")


def after_attempt(
    policy: RetryPolicy,
    attempt: int,
    *,
    rand: float,
    raw: RawResponse | None = None,
    exc: BaseException | None = None,
    now: datetime | None = None,
) -> Step:
    """Classify one attempt's outcome (a response ``raw`` or a transport exception ``exc``).

    Args:
        policy: The retry policy.
        attempt: Retries already made.
        rand: Random number in [0, 1) for jitter.
        raw: The response, when one arrived.
        exc: The transport exception, when none did.
        now: Current time, only needed for HTTP-date ``Retry-After`` values.
    """
    if exc is not None:
        delay = next_delay(policy, attempt, rand=rand, exc=exc)
        return Step(retry_in=delay) if delay is not None else Step(error=connection_error(exc))
    assert raw is not None, "either raw or exc is required"
    if raw.status < 400:
        return Step()
    retry_after = parse_retry_after(raw.headers.get("retry-after"), now)
    delay = next_delay(policy, attempt, rand=rand, status=raw.status, retry_after=retry_after)
    return Step(retry_in=delay) if delay is not None else Step(error=error_from_response(raw))
