"""A reverse proxy's forwarded headers (``X-Forwarded-For``/``-Proto``/``-Host``), trusted only when
the socket peer is one of the proxies ``ELEPHANTASM_FORWARDED_ALLOW_IPS`` names (unset: none).

The app applies them itself instead of the ASGI server: uvicorn rewrites the client address and
forgets the peer, so nothing after it could tell whether ``X-Forwarded-Host`` came from the proxy or
from any client; and uvicorn's own default trusts every loopback client.
"""

from __future__ import annotations

from collections.abc import Callable

from litestar import Request
from litestar.types import ASGIApp, Receive, Scope, Send
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

_VIA_PROXY = "elephantasm.via_trusted_proxy"


def forwarded_headers(allow_ips: str | None) -> Callable[[ASGIApp], ASGIApp]:
    """Middleware: from a trusted proxy, the client and scheme it forwards (uvicorn's rules) and a
    mark that :func:`via_trusted_proxy` reads; from anyone else, the headers change nothing."""
    allowed = (allow_ips or "").strip()

    def middleware(app: ASGIApp) -> ASGIApp:
        if not allowed:
            return app
        proxy = ProxyHeadersMiddleware(app, trusted_hosts=allowed)  # type: ignore[arg-type]

        async def handle(scope: Scope, receive: Receive, send: Send) -> None:
            peer = scope.get("client")
            if peer is not None and peer[0] in proxy.trusted_hosts:
                scope[_VIA_PROXY] = True  # type: ignore[literal-required]
                await proxy(scope, receive, send)  # type: ignore[arg-type]
            else:
                await app(scope, receive, send)

        return handle

    return middleware


def via_trusted_proxy(request: Request) -> bool:
    """True when the request reached the app through a configured reverse proxy."""
    return bool(request.scope.get(_VIA_PROXY))
