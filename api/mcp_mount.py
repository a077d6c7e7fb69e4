"""The MCP server over streamable HTTP, mounted at ``/mcp`` on the API.

- **Auth**: the same bearer API key as the API, checked before anything reaches the MCP layer
  (401 with a JSON ``detail`` otherwise); any scope may connect. Each tool call then runs with that
  caller's key, so the tenant and scope rules are the API's own: another org's ids are 404, and a
  read key can ``recall``, ``search_memories`` and ``list_animas`` while ``remember`` and
  ``forget_memory`` answer it with the API's 403.
- **Transport**: stateless JSON responses, over POST only. Nothing lives between requests, so any of
  several ``serve --workers`` processes (or replicas) can answer any request; there is no session,
  so no server-sent event stream to open with GET (405, as the MCP transport allows).
- **Tools** (``elephantasm/mcpserver/tools.py``) call the API through our SDK over an in-process
  ASGI transport: no socket, no second implementation of validation or tenancy.
- **Lifespan**: the SDK's session manager runs inside the app's lifespan (a task group of its own).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from litestar import Litestar, Request
from litestar.config.app import AppConfig
from litestar.handlers import asgi
from litestar.plugins import InitPlugin
from litestar.types import Receive, Scope, Send
from mcp.server.mcpserver import Context
from mcp.server.transport_security import TransportSecuritySettings

from api.auth import provide_caller
from api.errors import asgi_error
from elephantasm.domain.errors import AuthenticationError
from elephantasm.domain.keys import KeyScope
from elephantasm.mcpserver.tools import build_server
from elephantasm_sdk import AsyncElephantasm

_INTERNAL = "http://elephantasm.internal"


class McpPlugin(InitPlugin):
    """Mounts ``/mcp`` and runs the MCP session manager for the app's lifetime."""

    def __init__(self) -> None:
        self.server = build_server(self._client_for)
        # DNS-rebinding protection checks Host/Origin for key-less local servers; every request
        # here carries an API key, and the API may be reached under any host name.
        self.server.streamable_http_app(
            stateless_http=True,
            json_response=True,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        self._http: httpx.AsyncClient | None = None

    def on_app_init(self, app_config: AppConfig) -> AppConfig:
        # Reaching the MCP layer needs only a valid key: each tool's API call checks its own scope.
        mount = asgi("/mcp", is_mount=True, copy_scope=True, opt={"scope": KeyScope.READ})
        app_config.route_handlers.append(mount(self._mount()))
        app_config.lifespan.append(self._lifespan)
        return app_config

    @asynccontextmanager
    async def _lifespan(self, app: Litestar) -> AsyncIterator[None]:
        transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]  # Litestar is ASGI; httpx types scope/messages as plain MutableMappings, Litestar as TypedDicts
        async with (
            httpx.AsyncClient(transport=transport, base_url=_INTERNAL) as http,
            self.server.session_manager.run(),
        ):
            self._http = http
            try:
                yield
            finally:
                self._http = None

    def _mount(self) -> Any:
        async def mcp_endpoint(scope: Scope, receive: Receive, send: Send) -> None:
            if scope.get("method") != "POST":  # stateless: no stream to GET, no session to DELETE
                detail = f"{scope.get('method')} is not allowed on /mcp: send POST"
                await asgi_error(405, detail, {"Allow": "POST"})(scope, receive, send)
                return
            try:
                await provide_caller(Request(scope, receive), scope["litestar_app"].state)
            except AuthenticationError as exc:
                await asgi_error(401, exc.detail, {"WWW-Authenticate": "Bearer"})(scope, receive, send)
                return
            await self.server.session_manager.handle_request(scope, receive, send)  # type: ignore[arg-type]

        return mcp_endpoint

    async def _client_for(self, ctx: Context) -> AsyncElephantasm:
        """An SDK client acting with the calling request's own key, reaching the API in-process."""
        if self._http is None:
            raise RuntimeError("the MCP mount is not running (app lifespan not entered)")
        _, _, key = (ctx.headers or {}).get("authorization", "").partition(" ")
        return AsyncElephantasm(api_key=key.strip(), endpoint=_INTERNAL, http_client=self._http, max_retries=0)
