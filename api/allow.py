"""Complete ``Allow`` headers on the answers to ``OPTIONS``.

Litestar's automatic OPTIONS handler reports the methods of the route it was made for. A controller
registers its handlers one by one, and when a second method joins a path the route is rebuilt but
keeps the first route's OPTIONS handler, so ``Allow`` names only some methods. The app's routing
table knows every method of every path: this middleware answers from it.
"""

from __future__ import annotations

from functools import cache

from litestar import Litestar
from litestar.routes import HTTPRoute
from litestar.types import ASGIApp, Message, Receive, Scope, Send


@cache
def _allow(app: Litestar, path_template: str) -> bytes | None:
    """The ``Allow`` value of the route ``path_template`` names (None: not an HTTP route)."""
    for route in app.routes:
        if isinstance(route, HTTPRoute) and path_template in (route.path_format, route.path):
            return ", ".join(sorted({*route.methods, "OPTIONS"})).encode()
    return None


def complete_allow(app: ASGIApp) -> ASGIApp:
    """Middleware: an OPTIONS answer's ``Allow`` header lists every method its path serves."""

    async def allow_all(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "OPTIONS" or "path_template" not in scope:
            await app(scope, receive, send)
            return
        allow = _allow(Litestar.from_scope(scope), scope["path_template"])
        if allow is None:
            await app(scope, receive, send)
            return

        async def send_complete(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"allow"]
                message["headers"] = [*headers, (b"allow", allow)]
            await send(message)

        await app(scope, receive, send_complete)

    return allow_all
