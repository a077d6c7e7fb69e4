"""Bearer-key authentication (and the key's scope, see ``api/scopes.py``) as a dependency, with a
short-lived verification cache.

The cache keeps the hot path at zero extra queries. Revoking a key evicts it from the revoking
process's cache at once; on other replicas the TTL (``auth_cache_seconds``) bounds how long a key
revoked elsewhere keeps working. A cached key never outlives its ``expires_at``.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from litestar import Request
from litestar.datastructures import State

from api.ratelimit import FailedAuthLimiter
from api.scopes import check_scope
from elephantasm.domain.errors import AuthenticationError
from elephantasm.runtime import Runtime
from elephantasm.security import hash_api_key, looks_like_api_key
from elephantasm.services.keys import Caller, touch_key, verify_key

_MAX_CACHE = 10_000


class AuthCache:
    """key hash → (caller, monotonic expiry)."""

    def __init__(self, ttl_seconds: float) -> None:
        self.ttl = ttl_seconds
        self._entries: dict[str, tuple[Caller, float]] = {}

    def get(self, digest: str) -> Caller | None:
        hit = self._entries.get(digest)
        if hit is None or hit[1] < time.monotonic():
            return None
        return hit[0]

    def evict_key(self, key_id: object) -> int:
        """Forget every cached verification of one key (revoked here: no wait for the TTL)."""
        doomed = [d for d, (caller, _) in self._entries.items() if caller.key_id == key_id]
        for digest in doomed:
            del self._entries[digest]
        return len(doomed)

    def put(self, digest: str, caller: Caller) -> None:
        if len(self._entries) >= _MAX_CACHE:
            self._entries.clear()
        self._entries[digest] = (caller, time.monotonic() + self.ttl)


def _bearer(request: Request) -> str:
    header = request.headers.get("authorization")
    if not header:
        raise AuthenticationError("missing API key: send 'Authorization: Bearer sk_live_…'")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise AuthenticationError("malformed Authorization header: expected 'Bearer <api key>'")
    return token.strip()


def client_address(request: Request) -> str:
    """The address failed attempts are counted against: the socket peer, or the client a trusted
    proxy names (``api/forwarded.py`` rewrites the peer only for ``forwarded_allow_ips``)."""
    return request.client.host if request.client else "unknown"


@asynccontextmanager
async def failures_counted(request: Request, state: State) -> AsyncIterator[None]:
    """An authentication attempt under the failed-auth limit (``api/ratelimit.py``): 429 before it
    while the client address is over its budget, and an AuthenticationError inside counts one
    failure. The API's bearer keys and the inspector's sign-in form share this one budget."""
    limiter: FailedAuthLimiter = state.auth_limiter
    address = client_address(request)
    limiter.check(address)
    try:
        yield
    except AuthenticationError:
        limiter.record_failure(address)
        raise


async def provide_caller(request: Request, state: State) -> Caller:
    """Resolve the caller's org from the bearer key, or 401; 429 while the client address is over
    its budget of failed attempts."""
    async with failures_counted(request, state):
        return await _authenticate(request, state)


async def verify_api_key(runtime: Runtime, key: str) -> Caller:
    """The caller ``key`` belongs to, its last use recorded; AuthenticationError for a malformed,
    unknown, revoked or expired key. The API's bearer keys and the inspector's sign-in both check here."""
    if not looks_like_api_key(key):
        raise AuthenticationError("invalid API key")
    async with runtime.unit_of_work() as session:
        caller = await verify_key(session, hash_api_key(key, runtime.secret), runtime.clock())
        if caller is not None:
            await touch_key(session, caller.key_id, runtime.clock())
    if caller is None:
        raise AuthenticationError("invalid, revoked or expired API key")
    return caller


async def _authenticate(request: Request, state: State) -> Caller:
    runtime: Runtime = state.runtime
    cache: AuthCache = state.auth_cache
    key = _bearer(request)
    digest = hash_api_key(key, runtime.secret)
    caller = cache.get(digest)
    if caller is None or caller.expired(runtime.clock()):
        # Only on a cache miss: with the cache on, at most one write (the last use) per key per TTL per replica.
        caller = await verify_api_key(runtime, key)
        if runtime.settings.auth_cache_seconds > 0:
            cache.put(digest, caller)
    check_scope(request, caller)
    return caller
