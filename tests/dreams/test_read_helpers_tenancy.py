"""Every read helper takes the caller's org and is tenant-safe on its own, not by call order
(issue 11, item 8): given another org's ids it returns nothing of them."""

from __future__ import annotations

from sqlalchemy import select

from elephantasm.db.models import Knowledge, Memory
from elephantasm.runtime import Runtime
from elephantasm.services.dreams import memories, queries, run_dream
from elephantasm.services.dreams.identity import current_identity
from tests.conftest import Tenant
from tests.dreams.helpers import add_events, new_anima, turns

CHAT = [
    "Hi! I live in Lisbon and my favorite color is green.",
    "Lovely, green it is.",
    "I prefer tea over coffee.",
    "Noted: tea.",
]


async def test_read_helpers_scope_by_org(runtime: Runtime, tenant: Tenant, other_tenant: Tenant) -> None:
    anima_id = await new_anima(runtime, tenant.org_id)
    await add_events(runtime, tenant.org_id, anima_id, turns(CHAT))
    run = await run_dream(runtime.dreams, tenant.org_id, anima_id, trigger="test")
    async with runtime.read_session() as session:
        memory_ids = list((await session.execute(select(Memory.id).where(Memory.anima_id == anima_id))).scalars())
        knowledge_ids = list(
            (await session.execute(select(Knowledge.id).where(Knowledge.anima_id == anima_id))).scalars()
        )
        assert memory_ids and knowledge_ids

        mine = await memories.provenance(session, tenant.org_id, memory_ids)
        assert all(mine[m] for m in memory_ids)
        theirs = await memories.provenance(session, other_tenant.org_id, memory_ids)
        assert all(theirs[m] == [] for m in memory_ids)

        mine_k = await queries.knowledge_provenance(session, tenant.org_id, knowledge_ids)
        assert all(mids and eids for mids, eids in mine_k.values())
        theirs_k = await queries.knowledge_provenance(session, other_tenant.org_id, knowledge_ids)
        assert all(v == ([], []) for v in theirs_k.values())

        actions, total = await queries.run_actions(session, tenant.org_id, run.id, 100)
        assert actions and total == len(actions)
        assert await queries.run_actions(session, other_tenant.org_id, run.id, 100) == ([], 0)

        assert await current_identity(session, tenant.org_id, anima_id) is not None
        assert await current_identity(session, other_tenant.org_id, anima_id) is None
