"""What every ``serve`` does once at start: create the first key on an empty database and log the
banner (where the data lives, which embedder, dream engine and LLM, where the API listens), one INFO
line per fact. Never a key: database URLs are shown without their password.
"""

from __future__ import annotations

import logging
import sys
from urllib.parse import urlsplit, urlunsplit

from sqlalchemy.engine import make_url

from elephantasm.cli.context import console
from elephantasm.runtime import Runtime
from elephantasm.security import write_private
from elephantasm.services import keys as key_svc
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


FIRST_KEY_FILE = "first-api-key"


async def bootstrap_first_key(runtime: Runtime) -> None:
    """On an empty database, create a local org and key and show the key once: on the terminal,
    or, when stdout is not one, in ``data_dir/first-api-key`` (0600) — never in a log."""
    async with runtime.unit_of_work() as session:
        if await key_svc.count_keys(session) > 0:
            return
        issued = await key_svc.create_key(session, runtime.secret, "local", name="bootstrap")
    line = f"export ELEPHANTASM_API_KEY={issued.key}"
    if sys.stdout.isatty():
        console.print("[bold]First start: created org 'local' and an API key. It is shown only once:[/bold]")
        print(line, flush=True)
        return
    # stdout is a pipe or a file (a log): the key must never land there. It goes to a file only
    # its owner can read, and the log names the file.
    path = runtime.settings.data_dir / FIRST_KEY_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    write_private(path, (line + "\n").encode())
    print(
        f"First start: created org 'local' and an API key; stdout is not a terminal, so the key was "
        f"written to {path} (mode 0600). Read it, then delete the file.",
        flush=True,
    )


def listening_lines(settings: Settings) -> list[str]:
    """The banner's lines about where to reach the API, the inspector, the metrics and the MCP server."""
    base = f"http://{settings.host}:{settings.port}"
    if not settings.metrics_enabled:
        metrics = "metrics: off"
    elif settings.metrics_port:
        metrics = f"metrics: http://{settings.host}:{settings.metrics_port}/metrics"
    else:
        metrics = f"metrics: {base}/metrics"
    mcp = f"MCP: {base}/mcp (streamable HTTP)" if settings.mcp_enabled else "MCP: off"
    return [f"listening on {base} (OpenAPI at /schema)", f"inspector: {base}/ui", metrics, mcp]
