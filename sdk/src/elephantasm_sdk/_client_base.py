"""State and helpers shared by the sync and async clients (no I/O here)."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, TypeVar

import httpx

from ._core.packs import PackCache
from ._core.request import RawResponse, RequestSpec, default_headers
from ._core.retry import RetryPolicy
from .config import ClientOptions, resolve_options

C = TypeVar("C", bound="ClientBase")


def to_raw(response: httpx.Response) -> RawResponse:
    """Freeze an httpx response into the core's plain representation."""
    headers = {k.lower(): v for k, v in response.headers.items()}
    return RawResponse(response.status_code, headers, response.content)


class ClientBase:
    """Options, headers, the pack cache and ``with_options`` copying."""

    _owns_http: bool

    def __init__(
        self,
        api_key: str | None = None,
        anima_id: str | None = None,
        endpoint: str | None = None,
        timeout: float | None = None,
        *,
        max_retries: int | None = None,
        retry: RetryPolicy | None = None,
        pack_cache_size: int = 128,
    ) -> None:
        self._options: ClientOptions = resolve_options(
            api_key=api_key,
            anima_id=str(anima_id) if anima_id else None,
            endpoint=endpoint,
            timeout=timeout,
            max_retries=max_retries,
            retry=retry,
        )
        self._headers = default_headers(self._options.api_key)
        self._pack_cache = PackCache(pack_cache_size)

    # --- read-only views of the options (0.2.0 exposed these as attributes) -------------------

    @property
    def api_key(self) -> str:
        """The API key in use."""
        return self._options.api_key

    @property
    def anima_id(self) -> str | None:
        """Default anima for calls that take an optional ``anima_id``."""
        return self._options.anima_id

    @anima_id.setter
    def anima_id(self, value: str | None) -> None:
        self._options = dataclasses.replace(self._options, anima_id=str(value) if value else None)

    @property
    def endpoint(self) -> str:
        """Base URL of the server (without ``/api``)."""
        return self._options.endpoint

    @property
    def timeout(self) -> float:
        """Default per-request timeout in seconds."""
        return self._options.timeout

    @property
    def max_retries(self) -> int:
        """Retries after the first attempt."""
        return self._options.retry.max_retries

    # --- helpers -----------------------------------------------------------------------------

    def _request_kwargs(self, spec: RequestSpec, timeout: float | None) -> dict[str, Any]:
        return {
            "method": spec.method,
            "url": self._options.endpoint + spec.path,
            "params": dict(spec.params) or None,
            "json": spec.json,
            "headers": {**self._headers, **spec.headers},
            "timeout": httpx.Timeout(timeout if timeout is not None else self._options.timeout),
        }

    def _derive(self: C, **changes: Any) -> C:
        """A copy with changed options that shares the connection pool and pack cache."""
        clone = copy.copy(self)
        clone._options = self._options.with_changes(**changes)
        clone._owns_http = False
        clone._bind_resources()
        return clone

    def _bind_resources(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError
