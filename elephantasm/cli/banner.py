"""The startup banner: where the data lives and which embedder, dream engine and LLM are in use.

One INFO line per fact, so it reads well as text and as JSON log lines. Never a key: database
URLs are shown with their password hidden and LLM keys are not mentioned at all.
"""

from __future__ import annotations

import logging
from urllib.parse import urlsplit, urlunsplit

from sqlalchemy.engine import make_url

from elephantasm.runtime import Runtime
from elephantasm.settings import Settings

log = logging.getLogger("elephantasm.startup")


def database_line(settings: Settings, database_url: str) -> str:
    """Where the data lives (embedded data dir, or the external database without its password)."""
    if settings.uses_embedded_postgres:
        return f"data: embedded PostgreSQL in {settings.data_dir}"
    safe = make_url(database_url).render_as_string(hide_password=True)
    return f"data: external PostgreSQL {safe} (secrets and keys: {settings.data_dir})"


def _origin(url: str) -> str:
    """``url`` without user info, query or fragment (where credentials sometimes hide)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    return urlunsplit((parts.scheme, f"{host}:{parts.port}" if parts.port else host, parts.path, "", ""))


def banner_lines(runtime: Runtime) -> list[str]:
    """The banner's lines for this runtime."""
    s = runtime.settings
    engine = getattr(runtime.dream_engine, "name", None) or type(runtime.dream_engine).__name__
    llm = f"{s.llm_model} at {_origin(s.llm_base_url)}" if s.llm_base_url else "none (offline distiller, no network)"
    return [
        database_line(s, runtime.database_url),
        f"embedder: {runtime.embedder.name}",
        f"dream engine: {engine}",
        f"LLM: {llm}",
    ]


def log_banner(runtime: Runtime, extra: list[str] | None = None) -> None:
    """Log the banner (plus ``extra`` lines such as the listening address) at INFO."""
    for line in [*banner_lines(runtime), *(extra or [])]:
        log.info("%s", line)
