"""OpenAI-compatible chat calls with our own bounded retries and usage accounting.

Every HTTP attempt is ours (the library's retries are off, :func:`build_client`): counted in
:class:`Usage`, spaced with jittered exponential backoff (429 honours ``Retry-After``), bounded.
Transport errors, 408/409/429/5xx and replies the parser rejects are retried; anything else, or
running out of attempts, raises :class:`DistillError` with the usage spent.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random
import time
from collections.abc import Awaitable, Callable
from contextlib import suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import openai

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam
    from openai.types.chat.completion_create_params import ResponseFormat

from elephantasm.domain.dreaming.types import DistillError, Usage
from elephantasm.observability import metrics

log = logging.getLogger(__name__)
T = TypeVar("T")
_RETRYABLE_STATUS = frozenset({408, 409, 429})


class MalformedReply(Exception):
    """The endpoint answered, but not with something we can use; worth another attempt."""


def build_client(base_url: str | None, api_key: str | None, timeout: float = 60.0) -> openai.AsyncOpenAI:
    """An ``AsyncOpenAI`` for any OpenAI-compatible endpoint, with the library's retries off."""
    # Local endpoints (vLLM, Ollama, the test server) accept any key; the library insists on one.
    return openai.AsyncOpenAI(base_url=base_url, api_key=api_key or "unused", timeout=timeout, max_retries=0)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How many extra attempts, and how long to wait between them (seconds)."""

    max_retries: int = 3
    base_delay: float = 0.5
    max_delay: float = 20.0
    max_retry_after: float = 60.0  # a server asking for longer than this is waited on for this long


def retry_after_seconds(error: BaseException, now: float | None = None) -> float | None:
    """The wait a 429/503 asks for (``retry-after-ms``, ``retry-after`` seconds or HTTP date); None
    when it asks for none, or in a form we cannot read (then backoff decides)."""
    headers = getattr(getattr(error, "response", None), "headers", None) or {}
    with suppress(KeyError, ValueError):
        return max(0.0, float(headers["retry-after-ms"]) / 1000.0)
    with suppress(KeyError, ValueError):
        return max(0.0, float(headers["retry-after"]))
    with suppress(KeyError, ValueError):
        when = email.utils.parsedate_to_datetime(headers["retry-after"]).timestamp()
        return max(0.0, when - (time.time() if now is None else now))
    return None


def is_retryable(error: BaseException) -> bool:
    """Whether another attempt could plausibly succeed."""
    if isinstance(error, (MalformedReply, openai.APIConnectionError)):  # includes APITimeoutError
        return True
    if isinstance(error, openai.APIStatusError):
        return error.status_code in _RETRYABLE_STATUS or error.status_code >= 500
    return False


def backoff_delay(attempt: int, error: BaseException, policy: RetryPolicy, rng: random.Random) -> float:
    """Delay before attempt ``attempt + 1``: the server's Retry-After if given, else jittered backoff."""
    asked = retry_after_seconds(error)
    if asked is not None:
        return min(asked, policy.max_retry_after)
    ceiling = min(policy.max_delay, policy.base_delay * (2**attempt))
    return ceiling * (0.5 + 0.5 * rng.random())  # "equal jitter": never zero, never in lockstep


@dataclass
class ChatCaller:
    """Makes one logical chat completion: attempts, parses, retries, and counts usage.

    ``client`` comes from :func:`build_client` (the library's own retries off)."""

    client: openai.AsyncOpenAI
    model: str
    policy: RetryPolicy = RetryPolicy()
    timeout: float = 60.0
    temperature: float | None = 0.0
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    rng: random.Random = field(default_factory=random.Random)
    usage: Usage = Usage()

    async def call(
        self, messages: list[ChatCompletionMessageParam], response_format: ResponseFormat, parse: Callable[[str], T]
    ) -> T:
        """Send ``messages``; return ``parse(reply_text)`` or raise :class:`DistillError`.

        ``parse`` raises :class:`MalformedReply` (or ``ValueError``) for a reply that cannot be
        used. ``self.usage`` accumulates every attempt, successful or not.
        """
        attempts = self.policy.max_retries + 1
        last: BaseException | None = None
        for attempt in range(attempts):
            if attempt:
                delay = backoff_delay(attempt - 1, last, self.policy, self.rng)  # type: ignore[arg-type]
                log.warning("LLM attempt %d/%d failed (%s); retrying in %.2fs", attempt, attempts, last, delay)
                await self.sleep(delay)
            try:
                return parse(await self._attempt(messages, response_format))
            except (MalformedReply, ValueError) as exc:
                last = exc if isinstance(exc, MalformedReply) else MalformedReply(str(exc))
            except openai.OpenAIError as exc:
                if not is_retryable(exc):
                    raise DistillError(f"LLM call failed: {exc}", usage=self.usage, attempts=attempt + 1) from exc
                last = exc
        raise DistillError(
            f"LLM call failed after {attempts} attempts: {last}", usage=self.usage, attempts=attempts
        ) from last

    async def _attempt(self, messages: list[ChatCompletionMessageParam], response_format: ResponseFormat) -> str:
        self.usage += Usage(calls=1)
        metrics.LLM_CALLS.labels(self.model).inc()
        extra: dict[str, Any] = {} if self.temperature is None else {"temperature": self.temperature}
        response = await self.client.chat.completions.create(
            model=self.model,
            messages=messages,
            response_format=response_format,
            timeout=self.timeout,
            **extra,
        )
        if response.usage is not None:
            self.usage += Usage(0, response.usage.prompt_tokens or 0, response.usage.completion_tokens or 0)
            metrics.llm_tokens(self.model, response.usage.prompt_tokens or 0, response.usage.completion_tokens or 0)
        if not response.choices:
            raise MalformedReply("reply has no choices")
        choice = response.choices[0]
        if choice.finish_reason == "length":
            raise MalformedReply("reply was cut off (finish_reason=length)")
        text = choice.message.content
        if not text or not text.strip():
            raise MalformedReply("reply is empty")
        return text
