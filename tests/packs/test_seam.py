"""Pack services take a ``PackDeps`` built at the edge by ``Runtime.packs`` (chat: ``Runtime.chat_packs``)."""

from __future__ import annotations

import uuid

from elephantasm.runtime import Runtime
from elephantasm.services.packs import build_request
from tests.dreams.helpers import variant


def test_runtime_packs_carries_the_runtimes_state_settings_clock_and_own_pool(pack_runtime: Runtime) -> None:
    rt = variant(pack_runtime, default_max_tokens=321, pack_retention_per_anima=9)
    deps = rt.packs
    assert deps.state is rt.pack_state and deps.clock is rt.clock and deps.embedder is rt.embedder
    assert deps.default_max_tokens == 321 and deps.pack_retention_per_anima == 9
    assert deps.engine is rt.engine  # a compile serves a request: the API's pool, not the background one


def test_runtime_chat_packs_binds_the_pack_service_and_the_chat_settings(pack_runtime: Runtime) -> None:
    chat_settings = {"local_pack_max_tokens": 555, "local_system_prompt": "be brief", "local_pack_query": "latest"}
    rt = variant(pack_runtime, default_max_tokens=321, **chat_settings)
    chat = rt.chat_packs
    assert (chat.max_tokens, chat.preamble, chat.query_mode) == (555, "be brief", "latest")
    org, anima = uuid.uuid4(), uuid.uuid4()
    request = chat.request(org, anima)  # the pack service over rt.packs: its defaults are rt's
    assert request == build_request(rt.packs, org, anima) and request.max_tokens == 321
