"""The web inspector at ``/ui``: server-rendered pages over the same services as the API."""

from api.ui.router import build_ui_router

__all__ = ["build_ui_router"]
