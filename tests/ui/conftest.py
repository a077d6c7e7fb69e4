"""Fixtures of the inspector tests: a fresh cookie jar per test, and one seeded org per module."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx
import pytest

from elephantasm.runtime import Runtime
from tests.conftest import Tenant, make_tenant
from tests.ui.seed import Seeded, seed_anima


@dataclass(frozen=True)
class World:
    """An org with a seeded anima, and a second org with an anima of its own."""

    owner: Tenant
    seeded: Seeded
    other: Tenant
    other_seeded: Seeded


@pytest.fixture(scope="module")
async def world(runtime: Runtime) -> World:
    """Seeded once per module (three dreams each): the pages only read it."""
    owner, other = await make_tenant(runtime, "ui-owner"), await make_tenant(runtime, "ui-other")
    return World(
        owner,
        await seed_anima(runtime, owner.org_id),
        other,
        await seed_anima(runtime, other.org_id, "other-assistant"),
    )


@pytest.fixture
async def browser_like(app) -> AsyncIterator[httpx.AsyncClient]:  # type: ignore[no-untyped-def]
    """A client with its own cookie jar (the shared ``client`` must never hold a UI session)."""
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
        yield c
