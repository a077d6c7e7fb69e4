"""``elephantasm`` entry point: parses arguments and dispatches to one command module.

Only argparse is imported up front (``cli/parser.py``); settings, logging and the command's own
module load once a command is known, so ``--help`` and usage errors answer at once.
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from elephantasm.cli.lifecycle import exit_cleanly_on_signals, quiet_broken_pipe
from elephantasm.cli.parser import build_parser

if TYPE_CHECKING:
    from elephantasm.settings import Settings

Command = Callable[[argparse.Namespace, "Settings"], int]


def resolve_command(target: str) -> Command:
    """The handler a parser names as ``"module:function"``, imported now."""
    module, _, name = target.partition(":")
    func: Command = getattr(importlib.import_module(module), name)
    return func


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the process exit code."""
    args = build_parser().parse_args(argv)
    from elephantasm.observability.logs import configure_logging
    from elephantasm.settings import Settings

    settings = Settings()
    configure_logging(settings.log_level, settings.log_format)
    exit_cleanly_on_signals()  # SIGTERM/SIGHUP run cleanups (and stop the embedded Postgres) too
    try:
        with quiet_broken_pipe():
            result = resolve_command(args.func)(args, settings)
            if isinstance(result, Coroutine):
                result = run_coroutine(result)
    except KeyboardInterrupt:
        return 128 + signal.SIGINT
    except Exception as exc:
        detail = domain_error_detail(exc)
        if detail is None:
            raise
        # what the user named does not exist or does not fit: say so, without a traceback
        print(f"elephantasm {args.command}: {detail}", file=sys.stderr)
        return 1
    return int(result or 0)


def domain_error_detail(exc: BaseException) -> Any:
    """The ``detail`` of a domain error, None for any other exception. Looked up in ``sys.modules``
    rather than imported: a command that never loaded the domain package cannot have raised one."""
    errors = sys.modules.get("elephantasm.domain.errors")
    if errors is None or not isinstance(exc, errors.DomainError):
        return None
    return exc.detail


def run_coroutine(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run ``coro`` to completion on uvloop when it is installed (less CPU per request, same
    asyncio API), else on asyncio's own loop."""
    try:
        import uvloop
    except ImportError:  # e.g. Windows, where uvloop does not build
        import asyncio

        return asyncio.run(coro)
    return uvloop.run(coro)


if __name__ == "__main__":
    sys.exit(main())
