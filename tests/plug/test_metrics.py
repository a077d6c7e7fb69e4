"""Prometheus metrics: ``/metrics`` without a key, request/pack/dream/LLM/embedder/pool collectors,
and the settings that turn it off or move it to a port of its own."""

from __future__ import annotations

import dataclasses
from dataclasses import replace

import httpx
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

from api.app import create_app
from api.metrics import start_metrics_server
from elephantasm.llm.client import build_client
from elephantasm.llm.distiller import LLMEngine
from elephantasm.runtime import Runtime
from elephantasm.services.dreams import run_dream
from tests.conftest import Tenant
from tests.dreams.helpers import add_events, new_anima, turns
from tests.support.openai_server import OpenAIServer
from tests.support.servers import free_port


def value(name: str, **labels: str) -> float:
    """A sample of the process registry (0 when it was never recorded)."""
    return REGISTRY.get_sample_value(name, labels) or 0.0


def scrape(text: str) -> dict[tuple[str, tuple], float]:
    """Parse an exposition into {(sample name, sorted labels): value}."""
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


async def test_metrics_need_no_key_and_label_requests_by_route_template(
    client: httpx.AsyncClient, tenant: Tenant, anima: dict
) -> None:
    route = "/api/animas/{anima_id}"
    before = value("elephantasm_http_requests_total", method="GET", route=route, status="200")
    missing_before = value("elephantasm_http_requests_total", method="GET", route=route, status="404")
    assert (await client.get(f"/api/animas/{anima['id']}", headers=tenant.headers)).status_code == 200
    assert (
        await client.get("/api/animas/00000000-0000-0000-0000-000000000000", headers=tenant.headers)
    ).status_code == 404

    r = await client.get("/metrics")  # no Authorization header
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    samples = scrape(r.text)
    key = ("elephantasm_http_requests_total", (("method", "GET"), ("route", route), ("status", "200")))
    assert samples.get(key) == before + 1, sorted(k for k in samples if k[0] == key[0])
    assert value("elephantasm_http_requests_total", method="GET", route=route, status="404") == missing_before + 1
    assert value("elephantasm_http_request_duration_seconds_count", method="GET", route=route, status="200") >= 1
    # ids never become labels: the concrete path does not appear anywhere in the exposition
    assert anima["id"] not in r.text
    assert ("elephantasm_db_pool_connections_in_use", ()) in samples


async def test_pack_cache_embedder_and_pool_are_counted(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, anima: dict
) -> None:
    embedder = runtime.embedder.name  # the configured default (labels carry the backend's name)
    event = {"anima_id": anima["id"], "event_type": "message.in", "content": "I keep bees on the roof"}
    assert (await client.post("/api/events", json=event, headers=tenant.headers)).status_code == 201
    miss, memory_hit = (
        value("elephantasm_pack_cache_lookups_total", result="miss"),
        value("elephantasm_pack_cache_lookups_total", result="memory_hit"),
    )
    compiles, compile_count = (
        value("elephantasm_pack_compiles_total"),
        value("elephantasm_pack_compile_duration_seconds_count"),
    )
    embeds = value("elephantasm_embedder_calls_total", embedder=embedder)
    url = f"/api/animas/{anima['id']}/memory-packs/latest?query=a%20query%20never%20seen%20before%20{anima['id']}"
    for _ in range(2):
        assert (await client.get(url, headers=tenant.headers)).status_code == 200
    assert value("elephantasm_pack_cache_lookups_total", result="miss") == miss + 1
    assert value("elephantasm_pack_cache_lookups_total", result="memory_hit") == memory_hit + 1
    assert value("elephantasm_pack_compiles_total") == compiles + 1
    assert value("elephantasm_pack_compile_duration_seconds_count") == compile_count + 1
    assert value("elephantasm_embedder_calls_total", embedder=embedder) >= embeds + 1  # the new query
    assert value("elephantasm_embedder_duration_seconds_count", embedder=embedder) >= 1
    assert value("elephantasm_db_pool_connections_in_use") >= 0  # checked in again after the requests


async def test_dream_runs_events_and_llm_tokens_are_counted(
    runtime: Runtime, tenant: Tenant, openai_server: OpenAIServer
) -> None:
    anima_id = await new_anima(runtime, tenant.org_id)
    await add_events(runtime, tenant.org_id, anima_id, turns(["I moved to Lisbon", "Noted!", "I love surfing", "Nice"]))
    completed, distilled = (
        value("elephantasm_dream_runs_total", outcome="completed"),
        value("elephantasm_events_distilled_total"),
    )
    calls = value("elephantasm_llm_calls_total", model="metrics-model")
    prompt = value("elephantasm_llm_tokens_total", model="metrics-model", kind="prompt")
    engine = LLMEngine(build_client(openai_server.base_url, None, timeout=5), "metrics-model", max_retries=0, timeout=5)
    run = await run_dream(replace(runtime.dreams, distiller=engine), tenant.org_id, anima_id)
    assert run.status == "completed", run.error
    assert value("elephantasm_dream_runs_total", outcome="completed") == completed + 1
    assert value("elephantasm_events_distilled_total") == distilled + run.events_read == distilled + 4
    assert value("elephantasm_llm_calls_total", model="metrics-model") == calls + run.llm_calls
    assert value("elephantasm_llm_tokens_total", model="metrics-model", kind="prompt") == prompt + run.prompt_tokens
    assert run.prompt_tokens > 0


async def test_metrics_can_be_turned_off(runtime: Runtime) -> None:
    off = create_app(
        dataclasses.replace(runtime, settings=runtime.settings.model_copy(update={"metrics_enabled": False}))
    )
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=off), base_url="http://test") as c:
        r = await c.get("/metrics")
    assert r.status_code == 404 and "detail" in r.json()


async def test_metrics_on_their_own_port(runtime: Runtime) -> None:
    port = free_port()
    settings = runtime.settings.model_copy(update={"metrics_port": port, "host": "127.0.0.1"})
    moved = create_app(dataclasses.replace(runtime, settings=settings))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=moved), base_url="http://test") as c:
        assert (await c.get("/metrics")).status_code == 404  # not on the API's port
    server, thread = start_metrics_server(settings)
    try:
        async with httpx.AsyncClient() as c:
            r = await c.get(f"http://127.0.0.1:{port}/metrics")
        assert r.status_code == 200 and "elephantasm_http_requests_total" in r.text
    finally:
        server.shutdown()
        thread.join(timeout=5)
