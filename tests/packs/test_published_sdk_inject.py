"""The published ``elephantasm==0.2.0`` client's ``inject()`` against a real server process.

It runs in its own virtualenv (``tests/support/published_sdk.py``, offline wheelhouse). The
anima gets events through the SDK and distilled memory, knowledge and an identity written
directly to the shared database (as the dreamer would), so every accessor has data to parse.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from elephantasm.runtime import Runtime
from tests.conftest import Tenant
from tests.packs.helpers import add_knowledge, add_memory, set_identity
from tests.support.published_sdk import published_sdk_python, run_sdk_script

SETUP_SCRIPT = """
import json
from elephantasm import create_anima, extract, inject, EventType

anima = create_anima("published-sdk-inject")
empty = inject(anima.id)
e1 = extract(EventType.MESSAGE_IN, "I am allergic to peanuts.", anima_id=anima.id, session_id="s1", role="user")
e2 = extract(EventType.MESSAGE_OUT, "Noted, no peanuts.", anima_id=anima.id, session_id="s1", role="assistant")
print(json.dumps({"anima": str(anima.id), "empty_is_none": empty is None, "events": [str(e1.id), str(e2.id)]}))
"""

INJECT_SCRIPT = """
import json, os
from elephantasm import inject

pack = inject(os.environ["ANIMA_ID"], query="what is the user allergic to, and when was it last mentioned?",
              preset="conversational")
out = {
    "prompt": pack.as_prompt(),
    "identity": pack.identity.model_dump(mode="json") if pack.identity else None,
    "session": [m.model_dump(mode="json") for m in pack.session_memories],
    "long_term": [m.model_dump(mode="json") for m in pack.long_term_memories],
    "knowledge": [k.model_dump(mode="json") for k in pack.knowledge],
    "temporal": pack.temporal_context.model_dump(mode="json") if pack.temporal_context else None,
    "token_count": pack.token_count, "max_tokens": pack.max_tokens, "preset": pack.preset_name,
    "anima_id": str(pack.anima_id),
}
print(json.dumps(out))
"""


@pytest.fixture(scope="session")
def sdk_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The published SDK's interpreter."""
    return published_sdk_python(tmp_path_factory)


async def test_published_client_gets_a_pack_with_every_layer(
    sdk_python: Path, live_server: str, runtime: Runtime, tenant: Tenant
) -> None:
    setup = run_sdk_script(sdk_python, SETUP_SCRIPT, tenant.api_key, live_server)
    assert setup["empty_is_none"] is True
    anima = setup["anima"]
    now = datetime.now(UTC)
    memory = await add_memory(
        runtime,
        tenant,
        anima,
        "The user has a severe peanut allergy.",
        time_end=now - timedelta(days=5),
        importance=0.9,
        event_ids=setup["events"][:1],
    )
    await add_knowledge(runtime, tenant, anima, "User is allergic to peanuts.", memory_ids=[memory])
    await set_identity(
        runtime,
        tenant,
        anima,
        personality_type="ISFJ",
        communication_style="warm",
        self={"values": ["safety"]},
        prose="A careful helper.",
    )

    out = run_sdk_script(sdk_python, INJECT_SCRIPT, tenant.api_key, live_server, ANIMA_ID=anima)
    assert out["prompt"].strip() and "peanut" in out["prompt"]
    assert out["anima_id"] == anima and out["preset"] == "conversational"
    assert 0 < out["token_count"] <= out["max_tokens"] == 4000
    assert out["identity"]["personality_type"] == "ISFJ" and out["identity"]["self_reflection"] == {
        "values": ["safety"]
    }
    assert [m["id"] for m in out["session"]] == setup["events"]
    assert all(
        set(m["breakdown"]) == {"importance", "confidence", "recency", "decay", "relevance"}
        for m in out["session"] + out["long_term"]
    )
    assert [m["id"] for m in out["long_term"]] == [str(memory)]
    assert [(k["content"], k["type"]) for k in out["knowledge"]] == [("User is allergic to peanuts.", "FACT")]
    # The question is about time, so the (lean) pack keeps its temporal line and data.
    assert out["temporal"]["formatted"] and out["temporal"]["hours_ago"] >= 0
