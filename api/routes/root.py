"""``GET /``: a browser goes to the inspector; any other client is told where things are."""

from __future__ import annotations

from litestar import Request, Response, get
from litestar.response import Redirect
from litestar.status_codes import HTTP_404_NOT_FOUND

UI_PATH = "/ui"
WHERE = "nothing is served at /: the API is under /api (OpenAPI at /schema), the inspector at /ui, MCP at /mcp"


def wants_html(request: Request) -> bool:
    """Whether the client asked for a page (a browser's ``Accept`` names text/html)."""
    return "text/html" in request.headers.get("accept", "")


@get("/", include_in_schema=False, sync_to_thread=False)
def root(request: Request) -> Response[dict[str, str]] | Redirect:
    """303 to ``/ui`` for a browser; a JSON 404 saying where the API and the inspector are otherwise."""
    if wants_html(request):
        return Redirect(UI_PATH, status_code=303)
    return Response({"detail": WHERE}, status_code=HTTP_404_NOT_FOUND)
