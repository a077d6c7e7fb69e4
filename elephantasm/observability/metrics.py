"""The process's Prometheus collectors (the default registry) and the small hooks the code calls.

With several API processes (``PROMETHEUS_MULTIPROC_DIR`` set) :func:`exposition` sums every
process's values. No label ever carries an id, a key or content.
"""

from __future__ import annotations

import os
import time
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"

_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

HTTP_REQUESTS = Counter(
    "elephantasm_http_requests", "HTTP requests answered, by route template and status.", ["method", "route", "status"]
)
HTTP_LATENCY = Histogram(
    "elephantasm_http_request_duration_seconds",
    "Time to answer an HTTP request, by route template and status.",
    ["method", "route", "status"],
    buckets=_LATENCY_BUCKETS,
)
PACK_CACHE = Counter(
    "elephantasm_pack_cache_lookups", "Pack snapshot lookups by result: memory_hit, shared_hit or miss.", ["result"]
)
PACK_COMPILES = Counter("elephantasm_pack_compiles", "Memory packs compiled (cache misses that were built).")
PACK_COMPILE_SECONDS = Histogram(
    "elephantasm_pack_compile_duration_seconds", "Time to compile one memory pack.", buckets=_LATENCY_BUCKETS
)
DREAM_RUNS = Counter("elephantasm_dream_runs", "Dream runs finished, by outcome (completed or failed).", ["outcome"])
EVENTS_DISTILLED = Counter("elephantasm_events_distilled", "Events distilled into memories by dream runs.")
LLM_CALLS = Counter("elephantasm_llm_calls", "Chat-completion attempts sent to the LLM endpoint, by model.", ["model"])
LLM_TOKENS = Counter(
    "elephantasm_llm_tokens", "LLM tokens used, by model and kind (prompt or completion).", ["model", "kind"]
)
EMBEDDER_CALLS = Counter("elephantasm_embedder_calls", "Calls to the embedding backend (cache misses).", ["embedder"])
EMBEDDER_TEXTS = Counter("elephantasm_embedder_texts", "Texts embedded by the backend.", ["embedder"])
EMBEDDER_SECONDS = Histogram(
    "elephantasm_embedder_duration_seconds",
    "Time of one call to the embedding backend.",
    ["embedder"],
    buckets=_LATENCY_BUCKETS,
)
KV_PRIMED = Counter(
    "elephantasm_kv_prompts",
    "Local-model prompts put in the KV cache, by outcome (hit, prefix, miss, ...).",
    ["outcome"],
)
KV_TOKENS = Counter(
    "elephantasm_kv_prompt_tokens", "Local-model prompt tokens, by how they got into the cache.", ["kind"]
)
KV_RESTORE_CHECKS = Counter(
    "elephantasm_kv_restore_checks",
    "KV restores checked against llama.cpp's count of evaluated tokens, by model and result.",
    ["model", "result"],
)
KV_REUSE_DISABLED = Gauge(
    "elephantasm_kv_reuse_disabled",
    "1 when KV restores were turned off for a model after one did not reuse.",
    ["model"],
    multiprocess_mode="max",
)
DB_POOL_IN_USE = Gauge(
    "elephantasm_db_pool_connections_in_use",
    "Database connections checked out of the pool (all processes).",
    multiprocess_mode="livesum",
)


def pack_compiled(seconds: float) -> None:
    """Count one compile and its duration."""
    PACK_COMPILES.inc()
    PACK_COMPILE_SECONDS.observe(seconds)


def dream_finished(outcome: str, events_read: int) -> None:
    """Count a finished dream run and the events it distilled."""
    DREAM_RUNS.labels(outcome).inc()
    if events_read:
        EVENTS_DISTILLED.inc(events_read)


def llm_tokens(model: str, prompt_tokens: int, completion_tokens: int) -> None:
    """Count the tokens one reply reported."""
    if prompt_tokens:
        LLM_TOKENS.labels(model, "prompt").inc(prompt_tokens)
    if completion_tokens:
        LLM_TOKENS.labels(model, "completion").inc(completion_tokens)


def kv_primed(outcome: str, restored: int, prefilled: int) -> None:
    """Count one prompt put in the local model's cache: its outcome and tokens restored/prefilled."""
    KV_PRIMED.labels(outcome).inc()
    if restored:
        KV_TOKENS.labels("restored").inc(restored)
    if prefilled:
        KV_TOKENS.labels("prefilled").inc(prefilled)


def instrument_pool(engine: Any) -> None:
    """Track connections in use through the pool's checkout/checkin events (once per engine)."""
    from sqlalchemy import event

    sync_engine = engine.sync_engine
    if getattr(sync_engine, "_elephantasm_pool_metrics", False):
        return
    sync_engine._elephantasm_pool_metrics = True
    event.listen(sync_engine, "checkout", _checked_out)
    event.listen(sync_engine, "checkin", _checked_in)


_COUNTED = "elephantasm_counted"


def _checked_out(_dbapi: Any, record: Any, _proxy: Any) -> None:
    record.info[_COUNTED] = True
    DB_POOL_IN_USE.inc()


def _checked_in(_dbapi: Any, record: Any) -> None:
    # Only connections counted at checkout: one already out when the listener was added (the
    # engine is instrumented when the app is built) must not drive the gauge below zero.
    if record.info.pop(_COUNTED, False):
        DB_POOL_IN_USE.dec()


class InstrumentedEmbedder:
    """Wraps an embedder to count its calls, texts and latency (sits under the LRU: misses only)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.in_process: bool = getattr(inner, "in_process", False)
        self.space: Any = getattr(inner, "space", None)  # the wrapped backend's embedding space

    async def embed(self, texts: list[str]) -> list[list[float]]:
        """Embed through the wrapped backend, timing the call."""
        started = time.perf_counter()
        try:
            return await self.inner.embed(texts)
        finally:
            EMBEDDER_CALLS.labels(self.name).inc()
            EMBEDDER_TEXTS.labels(self.name).inc(len(texts))
            EMBEDDER_SECONDS.labels(self.name).observe(time.perf_counter() - started)


def multiprocess_dir() -> str | None:
    """The shared directory of multiprocess mode, if this process runs in it."""
    return os.environ.get(MULTIPROC_ENV) or None


def registry() -> CollectorRegistry:
    """The registry to expose: the process's own, or in multiprocess mode one summing every worker's."""
    if not multiprocess_dir():
        return REGISTRY
    summed = CollectorRegistry()
    multiprocess.MultiProcessCollector(summed)
    return summed


def exposition() -> tuple[bytes, str]:
    """The text exposition of every metric (summed over all workers in multiprocess mode)."""
    return generate_latest(registry()), CONTENT_TYPE_LATEST


def process_exited(pid: int) -> None:
    """Drop a finished worker's live gauges (multiprocess mode); its counters stay summed."""
    if multiprocess_dir():
        multiprocess.mark_process_dead(pid)
