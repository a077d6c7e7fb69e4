"""``/api/health``: liveness plus a database round trip."""

from __future__ import annotations

import time

from litestar import Response, get
from litestar.di import NamedDependency
from sqlalchemy import text

from elephantasm.runtime import Runtime
from elephantasm.services.reembed import reembed_pending


async def _embeddings(runtime: Runtime) -> dict:
    """The server's embedding space, and whether stored vectors of another space await ``reembed``
    (until then their relevance is full-text only)."""
    pending = await reembed_pending(runtime)
    return {"space": runtime.embedder.space.label(), "reembed_pending": pending,
            "relevance": "full-text only for vectors of other spaces" if pending else "hybrid"}


@get("/api/health", tags=["health"])
async def health(runtime: NamedDependency[Runtime]) -> Response[dict]:
    """200 with database latency when Postgres answers, 503 otherwise."""
    started = time.perf_counter()
    try:
        async with runtime.engine.connect() as conn:
            await conn.execute(text("SELECT 1"))
    except Exception as exc:  # noqa: BLE001 - any failure means "not healthy", reported as such
        return Response({"status": "degraded", "database": "down", "detail": str(exc)}, status_code=503)
    db_ms = round((time.perf_counter() - started) * 1000, 3)
    body = {"status": "ok", "database": "ok", "database_ms": db_ms, "pack_cache": runtime.packs.health(),
            "embeddings": await _embeddings(runtime)}
    return Response(body, status_code=200)
