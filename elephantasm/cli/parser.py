"""The ``elephantasm`` command line's arguments, with nothing heavier than argparse imported.

Every command names its handler as ``"module:function"`` (:func:`handler`), imported only when that
command runs: ``elephantasm --help`` and a mistyped option answer at once instead of first loading
the database driver, Alembic, the LLM client and the web framework every command needs some of.
"""

from __future__ import annotations

import argparse
import uuid
from pathlib import Path

MCP_ENVIRONMENT = (
    "environment: ELEPHANTASM_ENDPOINT (the server's URL, default http://127.0.0.1:8000), "
    "ELEPHANTASM_API_KEY (required: the key every tool call uses; a read key serves only the read tools), "
    "ELEPHANTASM_TIMEOUT (seconds per request)."
)
ORG_HELP = "org by name (it must exist: `elephantasm keys create --org NAME` creates one)"
JSON_HELP = "print JSON (one object per row) instead of a table"


def positive_int(text: str) -> int:
    """An argparse type: an integer of at least 1 (a batch size of 0 would never finish)."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def handler(parser: argparse.ArgumentParser, target: str) -> None:
    """Run ``target`` (``"package.module:function"``) for this command, imported when it runs."""
    parser.set_defaults(func=target)


def _group(sub: argparse._SubParsersAction, name: str, help: str) -> argparse._SubParsersAction:  # type: ignore[type-arg]
    """A command with sub-commands (``elephantasm keys create``…), one of which is required."""
    return sub.add_parser(name, help=help).add_subparsers(dest=f"{name}_command", required=True)


def _org(parser: argparse.ArgumentParser, default: str | None = "local", help: str = ORG_HELP) -> None:
    suffix = f" (default: {default})" if default else ""
    parser.add_argument("--org", default=default, help=help + suffix)


def _server_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    serve = sub.add_parser("serve", help="run the API (and the dreamer, unless disabled)")
    serve.add_argument("--host", default=None, help="address to listen on (default: ELEPHANTASM_HOST, 127.0.0.1)")
    serve.add_argument("--port", type=int, default=None, help="port to listen on (default: ELEPHANTASM_PORT, 8000)")
    serve.add_argument("--no-dreamer", action="store_true", help="do not run the dreamer in this process")
    serve.add_argument(
        "--workers", type=int, default=None, help="API processes over one database (one runs the dreamer scheduler)"
    )
    handler(serve, "elephantasm.cli.server:serve")
    handler(sub.add_parser("migrate", help="upgrade the database schema"), "elephantasm.cli.server:migrate")
    handler(
        sub.add_parser("status", help="database, row counts, events pending distillation"),
        "elephantasm.cli.status:status",
    )


def _key_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    keys = _group(sub, "keys", "API keys: create, list, revoke")
    create = keys.add_parser("create", help="issue a key (creates the org if new) and print it once")
    create.add_argument("--org", default="local", help="org of the key, created if new (default: local)")
    create.add_argument("--name", default=None, help="a label shown by `keys list`")
    create.add_argument("--expires-days", type=int, default=None, help="days until the key stops working")
    create.add_argument(
        "--scope",
        choices=["admin", "write", "read"],
        default="admin",
        help="admin manages keys; write also writes; read only reads (default admin)",
    )
    handler(create, "elephantasm.cli.admin:keys_create")
    lst = keys.add_parser("list", help="list keys (ids, prefixes and scopes; never the keys)")
    _org(lst, default=None, help="only this org's keys")
    lst.add_argument("--json", action="store_true", help=JSON_HELP)
    handler(lst, "elephantasm.cli.admin:keys_list")
    revoke = keys.add_parser("revoke", help="revoke a key")
    revoke.add_argument("key", help="the key's id, the short id `keys list` shows, or its prefix (sk_live_…)")
    handler(revoke, "elephantasm.cli.admin:keys_revoke")


def _anima_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    animas = _group(sub, "animas", "animas: create, list, purge, export, import")
    create = animas.add_parser("create", help="create an anima and print its id")
    create.add_argument("name", help="the anima's name")
    _org(create)
    create.add_argument("--description", default=None, help="free text shown in listings")
    handler(create, "elephantasm.cli.admin:animas_create")
    lst = animas.add_parser("list", help="list an org's animas")
    _org(lst)
    lst.add_argument("--json", action="store_true", help=JSON_HELP)
    handler(lst, "elephantasm.cli.admin:animas_list")
    purge = animas.add_parser("purge", help="erase every row of an anima for good (erasure requests)")
    purge.add_argument("anima", type=uuid.UUID, help="anima id (live or already deleted)")
    purge.add_argument("--yes", action="store_true", help="confirm: this cannot be undone")
    handler(purge, "elephantasm.cli.anima_data:animas_purge")
    export = animas.add_parser("export", help="write one anima as JSON lines (events, memories, knowledge, identity)")
    export.add_argument("anima", type=uuid.UUID, help="anima id")
    export.add_argument("--output", "-o", default=None, help="file to write (default: standard output)")
    handler(export, "elephantasm.cli.anima_data:animas_export")
    imp = animas.add_parser("import", help="create a new anima from an export file")
    imp.add_argument("file", help="a file written by `animas export` or GET /api/animas/{id}/export")
    _org(imp, help="org to import into (it must exist)")
    imp.add_argument("--name", default=None, help="name of the new anima (default: the exported one's)")
    handler(imp, "elephantasm.cli.anima_data:animas_import")


def _memory_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    events = _group(sub, "events", "events: import a JSON-lines file")
    imp = events.add_parser(
        "import", help="import events from a JSON-lines file (idempotent: importing a file again stores nothing twice)"
    )
    imp.add_argument("file", help="one POST /api/events body per line")
    _org(imp)
    imp.add_argument("--anima", default=None, help="anima id for lines that carry none")
    imp.add_argument("--batch-size", type=positive_int, default=500, help="events per transaction (default 500)")
    handler(imp, "elephantasm.cli.importer:events_import")

    inject = sub.add_parser("inject", help="print the memory pack an anima would get now, with a token table")
    inject.add_argument("anima", help="anima id, or its name within --org")
    _org(inject)
    inject.add_argument("--query", default=None, help="what the agent is about to answer (ranks memories)")
    inject.add_argument("--max-tokens", type=int, default=None, help="token budget of the pack")
    inject.add_argument("--preset", default=None, help="weighting preset (default: the server's)")
    inject.add_argument("--encoding", default=None, help="tiktoken encoding that counts tokens (default o200k_base)")
    inject.add_argument("--session", default=None, help="treat this session id as the current one")
    handler(inject, "elephantasm.cli.inject:inject")

    dream = sub.add_parser("dream", help="distil an anima's pending events now (progress bar, then a summary)")
    dream.add_argument("anima", help="anima id, or its name within --org")
    _org(dream)
    handler(dream, "elephantasm.cli.dream:dream")
    handler(sub.add_parser("dreamer", help="run the dreamer scheduler alone"), "elephantasm.cli.dream:dreamer")

    reembed = sub.add_parser(
        "reembed", help="re-embed vectors made by another embedder (resumable, safe while the server runs)"
    )
    reembed.add_argument("--anima", type=uuid.UUID, default=None, help="only this anima (id); default: every anima")
    reembed.add_argument("--batch-size", type=positive_int, default=None, help="rows per committed batch")
    handler(reembed, "elephantasm.cli.reembed:reembed")

    mcp = sub.add_parser(
        "mcp",
        help="MCP server over stdio for agent hosts (reads ELEPHANTASM_ENDPOINT and ELEPHANTASM_API_KEY)",
        description="Serve Elephantasm's MCP tools over stdio, calling a running server through the SDK.",
        epilog=MCP_ENVIRONMENT,
    )
    handler(mcp, "elephantasm.cli.mcp_cmd:run")


def _kv_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    kv = _group(sub, "kv", "KV snapshots and memory packages of the local model")
    build = kv.add_parser("build", help="prefill an anima's pack on the local model and keep its KV state")
    build.add_argument("anima", help="anima id, or its name within --org")
    build.add_argument("--query", default=None, help="query the pack is compiled for")
    ls = kv.add_parser("ls", help="list KV snapshots")
    ls.add_argument("--anima", default=None, help="only this anima's (id or name)")
    ls.add_argument("--json", action="store_true", help=JSON_HELP)
    export = kv.add_parser("export", help="write a snapshot as a signed memory package with a certificate")
    export.add_argument("snapshot", help="snapshot id")
    export.add_argument("out", type=Path, help="file to write")
    imp = kv.add_parser("import", help="verify a memory package and store it for an anima")
    imp.add_argument("file", type=Path, help="a memory package written by `kv export`")
    imp.add_argument("--anima", required=True, help="anima id or name to store it for")
    verify = kv.add_parser("verify", help="measure a snapshot's certificate (restored vs recomputed)")
    verify.add_argument("snapshot", help="snapshot id")
    prune = kv.add_parser("prune", help="drop snapshots of deleted animas and evict to the byte budget")
    prune.add_argument("--budget", type=int, default=None, help="bytes (default: ELEPHANTASM_LOCAL_KV_BUDGET_BYTES)")
    for p, name in ((build, "build"), (ls, "ls"), (export, "export"), (imp, "import_"), (verify, "verify")):
        _org(p)
        if name in ("export", "verify"):
            p.add_argument("--probes", type=int, default=4, help="prompts the certificate compares (default 4)")
        handler(p, f"elephantasm.cli.kv:{name}")
    _org(prune)
    handler(prune, "elephantasm.cli.kv:prune")


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser (also used by the tests to check the CLI surface)."""
    parser = argparse.ArgumentParser(prog="elephantasm", description="Long-term memory for AI agents.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _server_commands(sub)
    _key_commands(sub)
    _anima_commands(sub)
    _memory_commands(sub)
    _kv_commands(sub)
    return parser
