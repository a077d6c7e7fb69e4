"""The app of one ``serve --workers N`` process (uvicorn imports ``api.worker:create_worker_app``).

Each worker is a fresh interpreter: it reads Settings from the environment the supervisor
prepared (the resolved database URL, the worker group, ``PROMETHEUS_MULTIPROC_DIR``), builds its
own runtime and owns it for the app's lifetime. The supervisor already migrated the schema and
started the embedded Postgres, so workers never do either.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from litestar import Litestar

from elephantasm.observability import metrics
from elephantasm.observability.logs import configure_logging
from elephantasm.runtime import Runtime, build_runtime
from elephantasm.settings import Settings


def _owned(runtime: Runtime) -> Callable[[Runtime], Any]:
    """Closes the runtime when the app stops, and drops this process's live gauges."""

    @asynccontextmanager
    async def owner(_: Runtime) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await runtime.close()
            metrics.process_exited(os.getpid())

    return owner


def worker_background(settings: Settings) -> list[Callable[[Runtime], Any]]:
    """Beside the API: the group's one dreamer scheduler, if this worker wins the election."""
    if not (settings.dreamer_enabled and settings.worker_group):
        return []
    from dreamer.leader import leader_scheduler

    group = settings.worker_group
    return [lambda runtime: leader_scheduler(runtime, group)]


def create_worker_app() -> Litestar:
    """Build this worker's app from the environment (called once per worker process)."""
    from api.app import create_app
    from elephantasm.gcpause import frozen_startup_heap

    settings = Settings()
    if not settings.database_url:
        raise RuntimeError("workers need ELEPHANTASM_DATABASE_URL (set by `elephantasm serve --workers`)")
    configure_logging(settings.log_level, settings.log_format)
    runtime = build_runtime(settings, database_url=settings.database_url)
    return create_app(runtime, background=[_owned(runtime), *worker_background(settings), frozen_startup_heap])
