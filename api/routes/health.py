"""``/api/health``: liveness plus a database round trip.

Without an admin key it says only whether the service and its database answer, and how fast:
no exception text, no cache counters (those describe every tenant's traffic).
"""

from __future__ import annotations

import asyncio
import os
import time
from contextlib import suppress
from typing import Any

from litestar import Request, Response, get
from litestar.datastructures import State
from litestar.di import NamedDependency

from api.auth import provide_caller
from api.errors import DETAIL, RETRY_AFTER_SECONDS
from elephantasm.domain.keys import KeyScope
from elephantasm.runtime import Runtime
from elephantasm.services.health import ping_database
from elephantasm.services.keys import org_name
from elephantasm.services.reembed import any_stale
from elephantasm.services.spaces import current_space

# How long the answer is reused: a health probe must stay cheap whatever the data (the check is
# index-backed, but a planner working from stale statistics after a bulk load can scan every vector),
# and the answer only changes when an embedder changes or a re-embedding (another process) finishes.
PENDING_TTL_SECONDS = 30.0


async def reembed_pending(runtime: Runtime, max_age: float = PENDING_TTL_SECONDS) -> bool:
    """Whether any stored vector is in another space than the runtime's embedder's, learnt at most
    ``max_age`` seconds ago (``Runtime.spaces``)."""
    now = time.monotonic()
    known = runtime.spaces.reembed_pending
    if known is not None and now - known[0] < max_age:
        return bool(known[1])
    space = await current_space(runtime)
    async with runtime.read_session() as session:
        pending = await any_stale(session, space)
    runtime.spaces.reembed_pending = (now, pending)
    return pending


async def _embeddings(runtime: Runtime) -> dict:
    """The server's embedding space, and whether stored vectors of another space await ``reembed``
    (until then their relevance is full-text only)."""
    pending = await reembed_pending(runtime)
    return {
        "space": runtime.embedder.space.label(),
        "reembed_pending": pending,
        "relevance": "full-text only for vectors of other spaces" if pending else "hybrid",
    }


ADMIN_CHECK_SECONDS = 1.0
ADMIN_ORG = "local"
"""The operator's org (the one ``serve`` bootstraps): the counters describe every tenant, so only an
``admin``-scoped key of this org sees them, never a tenant's own admin key."""


async def _is_admin(request: Request, state: State, runtime: Runtime) -> bool:
    """Whether the request carries a valid admin key (no key, or a bad one, is simply "no")."""
    if "authorization" not in request.headers:
        return False
    try:
        caller = await provide_caller(request, state)
        async with runtime.read_session() as session:
            name = await org_name(session, caller.org_id)
    except Exception:
        return False
    return name == ADMIN_ORG and caller.scope is KeyScope.ADMIN


@get("/api/health", tags=["health"])
async def health(request: Request, state: State, runtime: NamedDependency[Runtime]) -> Response[dict]:
    """200 with the database latency when Postgres answers, 503 with ``Retry-After`` otherwise;
    an admin key adds the pack-cache counters (and, when down, the error)."""
    started = time.perf_counter()
    try:
        await ping_database(runtime.engine)
    except Exception as exc:
        body: dict[str, Any] = {
            "status": "degraded",
            "database": "down",
            "detail": DETAIL,
        }
        headers = {"Retry-After": str(RETRY_AFTER_SECONDS)}
        # Knowing who asks takes the database too: a stuck one must not hold the answer up.
        with suppress(TimeoutError):
            async with asyncio.timeout(ADMIN_CHECK_SECONDS):
                if await _is_admin(request, state, runtime):
                    body["error"] = f"{type(exc).__name__}: {exc}"
        return Response(body, status_code=503, headers=headers)
    db_ms = round((time.perf_counter() - started) * 1000, 3)
    # pid: which worker answered (serve --workers N); embeddings: whether re-embedding is pending. No tenant data.
    body = {
        "status": "ok",
        "database": "ok",
        "database_ms": db_ms,
        "pid": os.getpid(),
        "embeddings": await _embeddings(runtime),
    }
    if await _is_admin(request, state, runtime):
        body["pack_cache"] = runtime.pack_state.health()
    return Response(body, status_code=200)
