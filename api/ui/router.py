"""The inspector's router: every ``/ui`` page, its static files, and its HTML error pages."""

from __future__ import annotations

from pathlib import Path

from litestar import Router
from litestar.di import Provide
from litestar.static_files import create_static_files_router

from api.ui.anima_routes import AnimaPages
from api.ui.auth_routes import AuthController
from api.ui.chat_routes import ChatPages
from api.ui.deps import provide_ui_user
from api.ui.dream_routes import DreamPages
from api.ui.errors import UI_EXCEPTION_HANDLERS
from api.ui.forget_routes import ForgetActions
from api.ui.identity_routes import IdentityPages
from api.ui.knowledge_routes import KnowledgePages
from api.ui.memory_routes import MemoryPages
from api.ui.pack_routes import PackPages

STATIC_DIR = Path(__file__).resolve().parent / "static"


def build_ui_router() -> Router:
    """``/ui``: pages need a signed-in session (``ui``), resolved only by the handlers that ask for it."""
    static = create_static_files_router(
        path="/static",
        directories=[STATIC_DIR],
        include_in_schema=False,
        cache_control=None,
    )
    return Router(
        path="/ui",
        route_handlers=[
            AuthController,
            AnimaPages,
            MemoryPages,
            KnowledgePages,
            IdentityPages,
            DreamPages,
            PackPages,
            ForgetActions,
            ChatPages,
            static,
        ],
        dependencies={"ui": Provide(provide_ui_user)},
        exception_handlers=UI_EXCEPTION_HANDLERS,  # type: ignore[arg-type]
        include_in_schema=False,
        tags=["inspector"],
    )
