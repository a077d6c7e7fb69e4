"""Plug-ins of the app: Prometheus metrics and the MCP mount (each optional by setting)."""

from __future__ import annotations

import logging

from litestar.plugins import InitPlugin

from api.metrics import MetricsPlugin
from elephantasm.observability.metrics import instrument_pool
from elephantasm.runtime import Runtime

log = logging.getLogger(__name__)


def plugins(runtime: Runtime) -> list[InitPlugin]:
    """The plug-ins ``create_app`` installs for this runtime's settings."""
    settings = runtime.settings
    found: list[InitPlugin] = []
    if settings.metrics_enabled:
        instrument_pool(runtime.engine)
        found.append(MetricsPlugin(settings))
    if settings.mcp_enabled:
        try:
            from api.mcp_mount import McpPlugin
        except ImportError as exc:  # `mcp` or the SDK (./sdk, its own distribution) is not installed
            log.info("MCP at /mcp is off: %s (pip install ./sdk)", exc)
        else:
            found.append(McpPlugin())
    return found
