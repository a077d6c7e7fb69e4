"""Pack tests run against an app whose clock is frozen, so no test straddles an ``as_of`` bucket.

The runtime shares the session's database pool but has its own pack state (LRU, counters,
recall batcher), so cache counters start at zero in every test.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import httpx
import pytest

from api.app import create_app
from elephantasm.runtime import Runtime
from elephantasm.services.packs import PackState

# Mid-bucket (hour), so "now" and everything a test records land in one as_of bucket.
FROZEN_NOW = datetime.now(UTC).replace(minute=30, second=0, microsecond=0)


@pytest.fixture
async def pack_runtime(runtime: Runtime) -> AsyncIterator[Runtime]:
    """The session runtime with a frozen clock and fresh pack state."""
    rt = dataclasses.replace(runtime, clock=lambda: FROZEN_NOW, pack_state=PackState(runtime.settings.pack_cache_bytes))
    yield rt
    await rt.pack_state.aclose()


@pytest.fixture
async def pclient(pack_runtime: Runtime) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client for an app over ``pack_runtime`` (in the test's event loop)."""
    transport = httpx.ASGITransport(app=create_app(pack_runtime))
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
        yield c


@pytest.fixture
async def panima(pclient: httpx.AsyncClient, tenant) -> dict:  # type: ignore[no-untyped-def]
    """A fresh anima of ``tenant``."""
    r = await pclient.post("/api/animas", json={"name": "pack-anima"}, headers=tenant.headers)
    assert r.status_code == 201, r.text
    return r.json()
