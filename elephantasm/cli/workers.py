"""``elephantasm serve --workers N``: N API processes sharing one socket over one Postgres.

The parent starts the database, migrates and creates the first key once, then hands over to
uvicorn's supervisor (spawns, restarts and stops the workers). Workers get the resolved database
URL, one worker group id (they elect one dreamer scheduler, ``dreamer/leader.py``) and a shared
prometheus multiprocess directory, so ``/metrics`` on any worker adds up all of them.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import uuid
from pathlib import Path

from elephantasm.cli.banner import bootstrap_first_key, listening_lines, log_banner
from elephantasm.db.migrate import upgrade_async
from elephantasm.db.supervisor import supervised_postgres
from elephantasm.observability.metrics import MULTIPROC_ENV
from elephantasm.runtime import build_runtime, resolve_database_url
from elephantasm.settings import Settings

WORKER_APP = "api.worker:create_worker_app"
# A worker must answer the supervisor's ping within this long or it is replaced. uvicorn's 5 s
# default kills workers that are merely still importing on a busy machine (spawned interpreters
# import the whole app before their ping thread starts).
HEALTHCHECK_SECONDS = 60


async def _prepare(settings: Settings, url: str, workers: int, with_dreamer: bool) -> None:
    """Migrate, bootstrap the first key and print the banner, once, before any worker starts."""
    await upgrade_async(url)
    runtime = build_runtime(settings, database_url=url)
    try:
        await bootstrap_first_key(runtime)
        dreamer = "one worker (elected)" if with_dreamer else "off"
        log_banner(runtime, [*listening_lines(settings), f"workers: {workers} (dreamer scheduler: {dreamer})"])
    finally:
        await runtime.close()


def worker_env(settings: Settings, url: str, with_dreamer: bool, metrics_dir: str) -> dict[str, str]:
    """The environment the workers inherit (everything else comes from the parent's own)."""
    env = {
        "ELEPHANTASM_DATABASE_URL": url,
        "ELEPHANTASM_HOST": settings.host,
        "ELEPHANTASM_PORT": str(settings.port),
        "ELEPHANTASM_DATA_DIR": str(settings.data_dir),
        "ELEPHANTASM_WORKERS": "1",
        MULTIPROC_ENV: metrics_dir,
    }
    if with_dreamer:  # a group the operator named spans several `serve`s: one scheduler among all
        env["ELEPHANTASM_WORKER_GROUP"] = settings.worker_group or uuid.uuid4().hex
    else:
        env["ELEPHANTASM_DREAMER_ENABLED"] = "false"
    return env


def serve_workers(settings: Settings, workers: int, with_dreamer: bool) -> int:
    """Run ``workers`` API processes until interrupted; returns the exit code."""
    import uvicorn

    from api.metrics import start_metrics_server

    with_dreamer = with_dreamer and settings.dreamer_enabled
    url = resolve_database_url(settings)
    asyncio.run(_prepare(settings, url, workers, with_dreamer))
    given = os.environ.get(MULTIPROC_ENV)
    metrics_dir = given or tempfile.mkdtemp(prefix="elephantasm-metrics-")
    for stale in Path(metrics_dir).glob("*.db"):  # values of an earlier run must not add up with ours
        stale.unlink()
    os.environ.update(worker_env(settings, url, with_dreamer, metrics_dir))
    try:
        start_metrics_server(settings)  # on its own port, if configured: served by this parent
        with supervised_postgres(settings):
            uvicorn.run(
                WORKER_APP,
                factory=True,
                host=settings.host,
                port=settings.port,
                workers=workers,
                log_config=None,
                access_log=False,
                timeout_worker_healthcheck=HEALTHCHECK_SECONDS,
                proxy_headers=False,  # the app applies a trusted proxy's headers (api/forwarded.py)
            )
    finally:
        if not given:
            shutil.rmtree(metrics_dir, ignore_errors=True)
    return 0
