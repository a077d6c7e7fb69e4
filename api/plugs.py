"""Plug-ins of the app: Prometheus metrics and the MCP mount (each optional by setting)."""

from __future__ import annotations

import logging

from litestar.config.app import AppConfig
from litestar.plugins import InitPlugin

from api.metrics import MetricsPlugin
from elephantasm.observability.metrics import instrument_pool
from elephantasm.runtime import Runtime

log = logging.getLogger(__name__)


class ProcessLogging(InitPlugin):
    """Leaves logging to the process edge (``observability/logs.py``).

    Litestar's default logging config replaces the root handler with its own format, which would
    undo JSON logs and key redaction; errors are logged by ``api/errors.py`` anyway.
    """

    def on_app_init(self, app_config: AppConfig) -> AppConfig:
        app_config.logging_config = None
        return app_config


def plugins(runtime: Runtime) -> list[InitPlugin]:
    """The plug-ins ``create_app`` installs for this runtime's settings."""
    settings = runtime.settings
    found: list[InitPlugin] = [ProcessLogging()]
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
