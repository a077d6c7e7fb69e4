"""Fixtures for the SDK tests: a loopback server and sync/async client factories."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
from _sdk_support import LoopbackServer, close

from elephantasm_sdk import AsyncElephantasm, Elephantasm, RetryPolicy

#: Fast backoff so retry tests take milliseconds, not seconds.
FAST_RETRY = RetryPolicy(max_retries=3, initial_delay=0.01, max_delay=0.05, jitter=0.5)


@pytest.fixture
def loopback() -> Iterator[LoopbackServer]:
    """A real HTTP server on 127.0.0.1 with a random port."""
    server = LoopbackServer().start()
    yield server
    server.stop()


@pytest.fixture(params=["sync", "async"])
def kind(request: pytest.FixtureRequest) -> str:
    """Which client flavour a test runs with."""
    return request.param


@pytest.fixture
async def make_client(kind: str) -> AsyncIterator[Callable[..., Any]]:
    """Factory for a client of the current ``kind``; every client made is closed afterwards."""
    made: list[Any] = []

    def factory(endpoint: str, **kwargs: Any) -> Any:
        kwargs.setdefault("api_key", "sk_test_key")
        kwargs.setdefault("retry", FAST_RETRY)
        cls = Elephantasm if kind == "sync" else AsyncElephantasm
        client = cls(endpoint=endpoint, **kwargs)
        made.append(client)
        return client

    yield factory
    for client in made:
        await close(client)
