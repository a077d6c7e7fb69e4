"""Which key scope a route needs.

Reads (GET/HEAD/OPTIONS) need ``read``, anything else ``write``; a handler or controller overrides
with ``opt={"scope": ...}`` (the key routes need ``admin``; searches and explicit pack compiles are
POSTs that only read).
"""

from __future__ import annotations

from litestar import Request

from elephantasm.domain.errors import ForbiddenError
from elephantasm.domain.keys import KeyScope
from elephantasm.services.keys import Caller

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
READ_ONLY = {"scope": KeyScope.READ}
"""``opt`` for a POST route that only reads."""
ADMIN_ONLY = {"scope": KeyScope.ADMIN}
"""``opt`` for routes that manage keys."""


def required_scope(request: Request) -> KeyScope:
    """The scope the request's route needs."""
    declared = request.route_handler.opt.get("scope")
    if declared is not None:
        return KeyScope(declared)
    return KeyScope.READ if request.method in SAFE_METHODS else KeyScope.WRITE


def check_scope(request: Request, caller: Caller) -> None:
    """ForbiddenError (403) unless the caller's key may use this route."""
    needed = required_scope(request)
    if not caller.scope.allows(needed):
        raise ForbiddenError(
            f"this API key has scope '{caller.scope}'; {request.method} {request.url.path} needs a '{needed}' key"
        )
