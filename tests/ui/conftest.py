"""Fixtures of the inspector tests: a fresh cookie jar per test, and one seeded org per module."""

from __future__ import annotations

from dataclasses import dataclass

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
