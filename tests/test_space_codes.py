"""services.spaces: an embedding space's label gets one small code, registered once and committed on
its own, whoever asks first and however many ask at once."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid

from sqlalchemy import text

from elephantasm.runtime import Runtime
from elephantasm.services.spaces import SpaceFacts, current_space, register_space


async def test_a_label_gets_one_code_however_often_and_concurrently_it_is_registered(runtime: Runtime) -> None:
    label = f"test-space/{uuid.uuid4()}/1"
    codes = await asyncio.gather(*(register_space(runtime.engine, label) for _ in range(8)))
    assert len(set(codes)) == 1
    assert await register_space(runtime.engine, label) == codes[0]
    other = await register_space(runtime.engine, label + "x")
    assert other != codes[0]
    async with runtime.engine.connect() as conn:
        stored = (
            await conn.execute(text("SELECT label FROM embedding_spaces WHERE id = :i"), {"i": codes[0]})
        ).scalar()
    assert stored == label


async def test_a_code_is_committed_even_when_the_callers_transaction_rolls_back(runtime: Runtime) -> None:
    """The dreamer resolves its space before its step's transaction; were the registration part of a
    transaction that then failed, a cached code would name nothing."""
    rt = dataclasses.replace(runtime, spaces=SpaceFacts())  # a fresh process: nothing resolved yet
    try:
        async with rt.unit_of_work() as session:
            code = await current_space(rt)
            await session.execute(text("SELECT 1"))
            raise RuntimeError("the step fails")
    except RuntimeError:
        pass
    async with rt.engine.connect() as conn:
        found = (await conn.execute(text("SELECT id FROM embedding_spaces WHERE label = :l"),
                                    {"l": rt.embedder.space.label()})).scalar()  # fmt: skip
    assert found == code == await current_space(runtime)
