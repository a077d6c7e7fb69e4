"""What every ``serve`` does once before it answers: create the first key on an empty database
and say where the API listens (shared by the one-process server and the ``--workers`` parent)."""

from __future__ import annotations

import sys

from elephantasm.cli.context import console
from elephantasm.runtime import Runtime
from elephantasm.security import write_private
from elephantasm.services import keys as key_svc
from elephantasm.settings import Settings

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
