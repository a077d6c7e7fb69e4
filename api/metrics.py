"""Prometheus on the API: a request-metrics middleware and ``GET /metrics`` (no API key).

Requests are labelled by route *template* (``/api/animas/{anima_id:str}``), method and status, so
label sets stay bounded whatever ids clients send. ``/metrics`` is served on the API's port unless
``ELEPHANTASM_METRICS_PORT`` moves it to a port of its own or ``ELEPHANTASM_METRICS_ENABLED=false``
turns it off (see :func:`start_metrics_server`).
"""

from __future__ import annotations

import time
from typing import Any

from litestar import Response, get
from litestar.config.app import AppConfig
from litestar.enums import ScopeType
from litestar.middleware import ASGIMiddleware
from litestar.plugins import InitPlugin
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from elephantasm.observability import metrics
from elephantasm.settings import Settings


def route_label(scope: Scope) -> str:
    """The request's route template; for a mounted app (``/mcp``) the mount's own path, which
    Litestar leaves out of ``path_template``; ``unmatched`` when no route answered."""
    template = scope.get("path_template")
    if template:
        return template
    handler = scope.get("route_handler")
    if handler is not None and getattr(handler, "is_mount", False) and handler.paths:
        return str(min(handler.paths))
    return "unmatched"


class RequestMetricsMiddleware(ASGIMiddleware):
    """Counts every HTTP request and observes its latency (to the last body byte)."""

    scopes = (ScopeType.HTTP,)

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        started = time.perf_counter()
        status = 500  # what the client gets if the app raises before answering

        async def send_wrapper(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await next_app(scope, receive, send_wrapper)
        finally:
            labels = (scope.get("method", "GET"), route_label(scope), str(status))
            metrics.HTTP_REQUESTS.labels(*labels).inc()
            metrics.HTTP_LATENCY.labels(*labels).observe(time.perf_counter() - started)


@get("/metrics", include_in_schema=False, media_type="text/plain")
async def metrics_endpoint() -> Response[bytes]:
    """Prometheus text exposition of every collector (all workers summed in multiprocess mode)."""
    body, content_type = metrics.exposition()
    return Response(body, media_type=content_type)


def start_metrics_server(settings: Settings) -> Any:
    """Serve ``/metrics`` on ``metrics_port`` (a thread of this process); None when not configured."""
    if not (settings.metrics_enabled and settings.metrics_port):
        return None
    from prometheus_client import start_http_server

    return start_http_server(settings.metrics_port, addr=settings.host, registry=metrics.registry())


class MetricsPlugin(InitPlugin):
    """Adds the middleware and, unless moved to ``metrics_port``, the ``/metrics`` route (installed
    only when metrics are enabled: ``api/plugs.py``)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def on_app_init(self, app_config: AppConfig) -> AppConfig:
        app_config.middleware.append(RequestMetricsMiddleware())
        if not self.settings.metrics_port:
            app_config.route_handlers.append(metrics_endpoint)
        return app_config
