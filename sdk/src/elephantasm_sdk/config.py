"""Client configuration: explicit arguments first, then ``ELEPHANTASM_*`` environment variables.

The environment is read when a client is built, never at import time.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace

from ._core.retry import RetryPolicy

DEFAULT_ENDPOINT = "http://127.0.0.1:8000"
DEFAULT_TIMEOUT = 30.0


@dataclass(frozen=True)
class ClientOptions:
    """Resolved, immutable settings of one client."""

    api_key: str
    anima_id: str | None
    endpoint: str
    timeout: float
    retry: RetryPolicy

    def with_changes(
        self,
        *,
        timeout: float | None = None,
        max_retries: int | None = None,
        anima_id: str | None = None,
        retry: RetryPolicy | None = None,
    ) -> ClientOptions:
        """A copy with the given settings replaced (``None`` keeps the current value)."""
        policy = retry or self.retry
        if max_retries is not None:
            policy = replace(policy, max_retries=max_retries)
        return replace(
            self,
            timeout=self.timeout if timeout is None else float(timeout),
            anima_id=self.anima_id if anima_id is None else str(anima_id),
            retry=policy,
        )


def _env_float(env: Mapping[str, str], name: str) -> float | None:
    raw = env.get(name)
    if raw in (None, ""):
        return None
    try:
        return float(raw)
    except ValueError as exc:
        raise ValueError(f"{name} must be a number, got {raw!r}") from exc


def resolve_options(
    *,
    api_key: str | None = None,
    anima_id: str | None = None,
    endpoint: str | None = None,
    timeout: float | None = None,
    max_retries: int | None = None,
    retry: RetryPolicy | None = None,
    env: Mapping[str, str] | None = None,
) -> ClientOptions:
    """Merge explicit arguments with the environment.

    Environment variables: ``ELEPHANTASM_API_KEY``, ``ELEPHANTASM_ANIMA_ID``,
    ``ELEPHANTASM_ENDPOINT`` (default ``http://127.0.0.1:8000``), ``ELEPHANTASM_TIMEOUT`` (seconds,
    default 30) and ``ELEPHANTASM_MAX_RETRIES`` (default 2).

    Raises:
        ValueError: If no API key is given or found in the environment.
    """
    env = os.environ if env is None else env
    key = api_key or env.get("ELEPHANTASM_API_KEY")
    if not key:
        raise ValueError("API key required. Provide api_key parameter or set ELEPHANTASM_API_KEY.")
    env_timeout = _env_float(env, "ELEPHANTASM_TIMEOUT")
    env_retries = _env_float(env, "ELEPHANTASM_MAX_RETRIES")
    policy = retry or RetryPolicy()
    if max_retries is None and env_retries is not None:
        max_retries = int(env_retries)
    if max_retries is not None:
        policy = replace(policy, max_retries=max_retries)
    resolved_anima = anima_id or env.get("ELEPHANTASM_ANIMA_ID") or None
    return ClientOptions(
        api_key=key,
        anima_id=str(resolved_anima) if resolved_anima else None,
        endpoint=(endpoint or env.get("ELEPHANTASM_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/"),
        timeout=float(timeout or env_timeout or DEFAULT_TIMEOUT),
        retry=policy,
    )
