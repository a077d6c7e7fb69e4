"""Serving packs: the use cases behind ``latest``, ``compile`` and the CLI's ``inject``.

Hit path: one cheap read of the anima's ``state_version`` (what makes a stale snapshot impossible
across replicas), one LRU lookup, the stored bytes. On an LRU miss the shared tier is asked, then
the pack is compiled (once per key even under concurrent misses) and recorded.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from elephantasm.db.raw import driver_connection
from elephantasm.domain.errors import NotFoundError, ValidationError
from elephantasm.domain.fingerprint import normalise_query
from elephantasm.domain.presets import resolve_config
from elephantasm.domain.scoring import quantise
from elephantasm.logsafe import safe_traceback
from elephantasm.observability import metrics
from elephantasm.schemas.packs import MAX_MAX_TOKENS, MIN_MAX_TOKENS
from elephantasm.services.packs.cache import CachedPack, load_shared
from elephantasm.services.packs.compiler import CompiledPack, compile_pack
from elephantasm.services.packs.deps import PackDeps
from elephantasm.services.packs.keys import PackRequest, pack_key_inputs, snapshot_key
from elephantasm.services.packs.store import persist
from elephantasm.tokens import validate_encoding

log = logging.getLogger(__name__)

# asyncpg placeholders: these run on the driver connection (see ``elephantasm.db.raw``).
_HEAD_SQL = "SELECT state_version, last_event_at FROM animas WHERE id = $1 AND org_id = $2 AND deleted_at IS NULL"
_HAS_CONTENT_SQL = """
SELECT EXISTS (SELECT 1 FROM memories WHERE org_id = $2 AND anima_id = $1 AND deleted_at IS NULL)
    OR EXISTS (SELECT 1 FROM knowledge WHERE org_id = $2 AND anima_id = $1 AND deleted_at IS NULL)
    OR EXISTS (SELECT 1 FROM identities WHERE anima_id = $1)
"""
NULL_BODY = b"null"


Followup = Callable[[], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Served:
    """What to answer: 200 with ``body`` (JSON bytes), or 304; ``etag`` is the quoted fingerprint.

    ``followup``, when set, records a freshly compiled pack (history row + shared snapshot). The
    caller runs it after answering (the API as a response background task, so the client does
    not wait for that write; later requests on the same connection still see it); the CLI awaits it.
    """

    status: int
    body: bytes
    etag: str | None = None
    followup: Followup | None = None
    content_encoding: str | None = None
    """``"gzip"`` when ``body`` is the pack gzipped (the caller asked for it and it is enabled)."""


def etag_for(fingerprint: str) -> str:
    """The ETag header value of a pack (the fingerprint, quoted).

    The same for the JSON and its gzip coding: the documented "ETag = fingerprint" stays true
    for every client, and ``Vary: Accept-Encoding`` keeps shared caches' copies apart. (A strong
    tag per coding matters for range requests, which packs do not serve.)
    """
    return f'"{fingerprint}"'


def etag_matches(if_none_match: str | None, fingerprint: str) -> bool:
    """Whether an ``If-None-Match`` header names this fingerprint (quotes and ``W/`` tolerated)."""
    if not if_none_match:
        return False
    for tag in if_none_match.split(","):
        tag = tag.strip()
        if tag == "*":
            return True
        if tag.startswith("W/"):
            tag = tag[2:]
        if tag.strip('"') == fingerprint:
            return True
    return False


def build_request(
    deps: PackDeps,
    org_id: uuid.UUID,
    anima_id: uuid.UUID,
    *,
    query: str | None = None,
    preset: str | None = None,
    overrides: Mapping[str, Any] | None = None,
    max_tokens: int | None = None,
    encoding: str | None = None,
    session_id: str | None = None,
    as_of: datetime | None = None,
) -> PackRequest:
    """Validate and default a request (422s for an unknown preset/encoding or a bad override)."""
    if max_tokens is not None and not MIN_MAX_TOKENS <= max_tokens <= MAX_MAX_TOKENS:
        raise ValidationError(f"max_tokens: must be between {MIN_MAX_TOKENS} and {MAX_MAX_TOKENS}, got {max_tokens}")
    config = resolve_config(preset, overrides)
    return PackRequest(
        org_id=org_id,
        anima_id=anima_id,
        query=normalise_query(query),
        config=config,
        max_tokens=max_tokens or deps.default_max_tokens,
        encoding=validate_encoding(encoding or deps.default_encoding),
        as_of=quantise(as_of or deps.clock(), deps.as_of_bucket_seconds),
        session_id=session_id or None,
        embedding_space=deps.embedder.space.label(),
    )


async def _head(deps: PackDeps, req: PackRequest, *, allow_null: bool) -> int | None:
    """The anima's state_version (404 if missing); None when ``allow_null`` and nothing is recorded."""
    # The hit path's one database read: a round trip on the driver, no transaction around it.
    async with driver_connection(deps.engine) as conn:
        head = await conn.fetchrow(_HEAD_SQL, req.anima_id, req.org_id)
        if head is None:
            raise NotFoundError(f"anima {req.anima_id} not found")
        if (
            allow_null
            and head["last_event_at"] is None
            and not await conn.fetchval(_HAS_CONTENT_SQL, req.anima_id, req.org_id)
        ):
            return None
    return head["state_version"]


def _recorder(deps: PackDeps, org_id: uuid.UUID, compiled: CompiledPack, entry: CachedPack) -> Followup:
    async def record() -> None:
        try:
            await persist(deps, org_id, compiled, entry)
        except Exception as exc:
            log.error("recording compiled pack %s failed: %s", compiled.pack_id, safe_traceback(exc))

    return record


async def _compile(deps: PackDeps, req: PackRequest) -> tuple[CachedPack, Followup]:
    state = deps.state
    started = time.perf_counter()
    compiled = await compile_pack(deps, req)
    elapsed = time.perf_counter() - started
    state.metrics.record_compile(elapsed * 1000)
    metrics.pack_compiled(elapsed)
    entry = CachedPack(compiled.key, compiled.body, compiled.fingerprint, compiled.pack_id, compiled.memory_ids)
    return entry, _recorder(deps, req.org_id, compiled, entry)


async def _single_flight(deps: PackDeps, key: str, req: PackRequest) -> tuple[CachedPack, Followup | None]:
    """Load or compile once per key; concurrent requests for it wait for that one (and record nothing)."""
    inflight = deps.state.inflight
    running = inflight.get(key)
    if running is not None:
        return await asyncio.shield(running), None
    future: asyncio.Future[CachedPack] = asyncio.get_running_loop().create_future()
    inflight[key] = future
    try:
        entry, followup = await _load_or_compile(deps, key, req)
        future.set_result(entry)
        return entry, followup
    except BaseException as exc:
        future.set_exception(exc)
        future.exception()  # mark retrieved: nobody else may be waiting
        raise
    finally:
        inflight.pop(key, None)


async def _entry(deps: PackDeps, req: PackRequest, state_version: int) -> tuple[CachedPack, Followup | None]:
    """The pack for ``req`` at ``state_version``: LRU, else shared tier, else a compile."""
    state = deps.state
    key = snapshot_key(pack_key_inputs(req, state_version))
    entry = state.lru.get(key)
    if entry is not None:
        state.metrics.memory_hits += 1
        metrics.PACK_CACHE.labels("memory_hit").inc()
        return entry, None
    # No await between the LRU miss and joining the flight: a request arriving after a flight
    # finished finds its entry in the LRU (put before the flight ends), so each key compiles once.
    return await _single_flight(deps, key, req)


async def _load_or_compile(deps: PackDeps, key: str, req: PackRequest) -> tuple[CachedPack, Followup | None]:
    """Inside a flight: the shared tier (another replica's compile), else compile here; cached unless
    a deletion dropped cached packs meanwhile (``forget.drop_cached``): what was read may hold it."""
    state = deps.state
    discards = state.lru.discards
    async with driver_connection(deps.engine) as conn:
        entry = await load_shared(conn, key, req.org_id, req.anima_id)
    followup: Followup | None = None
    if entry is not None:
        state.metrics.shared_hits += 1
        metrics.PACK_CACHE.labels("shared_hit").inc()
    else:
        state.metrics.misses += 1
        metrics.PACK_CACHE.labels("miss").inc()
        entry, followup = await _compile(deps, req)
    if state.lru.discards == discards:
        state.lru.put(entry)
    return entry, followup


def _serve(
    deps: PackDeps,
    req: PackRequest,
    found: tuple[CachedPack, Followup | None],
    if_none_match: str | None,
    accept_gzip: bool,
) -> Served:
    state = deps.state
    entry, followup = found
    state.recalls.record(deps.engine, entry.memory_ids, req.as_of, deps.clock())
    etag = etag_for(entry.fingerprint)
    if etag_matches(if_none_match, entry.fingerprint):
        state.metrics.not_modified += 1
        return Served(304, b"", etag, followup)
    if accept_gzip and deps.compress_packs:
        return Served(200, state.lru.gzip_body(entry), etag, followup, content_encoding="gzip")
    return Served(200, entry.body, etag, followup)


async def latest(
    deps: PackDeps, req: PackRequest, if_none_match: str | None = None, *, accept_gzip: bool = False
) -> Served:
    """``GET …/memory-packs/latest``: the pack, 304 if unchanged, JSON null if nothing is recorded.

    ``accept_gzip``: the client accepts gzip (its ``Accept-Encoding``). The caller must run
    ``Served.followup`` when it is set.
    """
    state_version = await _head(deps, req, allow_null=True)
    if state_version is None:
        return Served(200, NULL_BODY)
    return _serve(deps, req, await _entry(deps, req, state_version), if_none_match, accept_gzip)


async def compile_now(
    deps: PackDeps, req: PackRequest, if_none_match: str | None = None, *, accept_gzip: bool = False
) -> Served:
    """``POST /api/packs/compile``: always a pack (possibly empty), served from the cache when identical.

    ``accept_gzip`` as for :func:`latest`. The caller must run ``Served.followup`` when it is set.
    """
    state_version = await _head(deps, req, allow_null=False)
    assert state_version is not None
    return _serve(deps, req, await _entry(deps, req, state_version), if_none_match, accept_gzip)
