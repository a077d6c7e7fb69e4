"""The Litestar application factory."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from litestar import Litestar
from litestar.datastructures import State
from litestar.di import Provide
from litestar.openapi import OpenAPIConfig

from api.allow import complete_allow
from api.auth import AuthCache, provide_caller
from api.deps import provide_runtime
from api.errors import EXCEPTION_HANDLERS
from api.forwarded import forwarded_headers
from api.guards import GuardedRequest, query_guard
from api.openapi import document_api
from api.plugs import plugins
from api.ratelimit import FailedAuthLimiter
from api.routes.anima_transfer import AnimaTransferController
from api.routes.animas import AnimaController
from api.routes.dreams import DreamController
from api.routes.events import EventController
from api.routes.health import health
from api.routes.identities import IdentityController
from api.routes.keys import KeyController
from api.routes.knowledge import KnowledgeController
from api.routes.kv import GenerationController, KVSnapshotController
from api.routes.local_chat import LocalChatController
from api.routes.memories import MemoryController
from api.routes.packs import AnimaPackController, PackController
from api.routes.root import root
from api.ui import build_ui_router
from elephantasm.llm.embedders import load_model
from elephantasm.runtime import Runtime

ROUTE_HANDLERS: list[Any] = [
    *(root, health, AnimaController, AnimaTransferController, EventController, KeyController),
    *(DreamController, MemoryController, KnowledgeController, IdentityController),  # what the dreamer made
    *(AnimaPackController, PackController),  # memory packs: latest (inject), compile, served history
    build_ui_router(),  # the web inspector at /ui
    *(LocalChatController, KVSnapshotController, GenerationController),  # model-level memory (local model)
]
"""Every route of the API."""


def create_app(
    runtime: Runtime,
    background: Sequence[Callable[[Runtime], Any]] = (),
) -> Litestar:
    """Build the app over an existing runtime.

    ``background`` are async context-manager factories run for the app's lifetime (the in-process
    dreamer scheduler is one); the runtime itself is owned and closed by the caller.
    """

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        load_model(runtime.embedder)
        async with AsyncExitStack() as stack:
            for factory in background:
                await stack.enter_async_context(factory(runtime))
            yield

    app = Litestar(
        route_handlers=ROUTE_HANDLERS,
        dependencies={"runtime": Provide(provide_runtime, sync_to_thread=False), "caller": Provide(provide_caller)},
        exception_handlers=EXCEPTION_HANDLERS,
        lifespan=[lifespan],
        plugins=plugins(runtime),  # metrics middleware + /metrics, the MCP mount at /mcp
        # Logging is set up at the process edge (observability/logs.py): Litestar's default config
        # would replace the root handler, undoing JSON logs and key redaction.
        logging_config=None,
        state=State(
            {
                "runtime": runtime,
                "auth_cache": AuthCache(runtime.settings.auth_cache_seconds),
                "auth_limiter": FailedAuthLimiter(
                    runtime.settings.auth_failure_limit, runtime.settings.auth_failure_window_seconds
                ),
            }
        ),
        request_max_body_size=runtime.settings.max_request_bytes,
        request_class=GuardedRequest,
        middleware=[forwarded_headers(runtime.settings.forwarded_allow_ips), query_guard, complete_allow],
        openapi_config=OpenAPIConfig(title="Elephantasm", version="0.1.0", path="/schema"),
        debug=False,
    )
    document_api(app)
    return app
