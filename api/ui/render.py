"""HTML responses from the package's Jinja2 templates (autoescaped), with the inspector's headers.

The environment is built once, on first use (no work at import time). Every page says: no
caching (pages show one org's data), no framing, scripts and styles only from this origin.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from litestar import MediaType, Response
from litestar.datastructures import Cookie

from elephantasm.ids import short_id
from elephantasm.local.model import llama_cpp_available

PAGE_SIZE = 50
"""Rows on one page of every inspector list."""

SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


def _when(value: datetime | None) -> str:
    if value is None:
        return "—"
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _short(value: Any) -> str:
    return short_id(value) if value is not None else "—"


def _num(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str)


@lru_cache(maxsize=1)
def environment() -> Environment:
    """The template environment (templates ship inside the package)."""
    env = Environment(
        loader=PackageLoader("api.ui", "templates"),
        autoescape=select_autoescape(["html"]),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(when=_when, short=_short, num=_num, pretty=_pretty)
    env.globals["chat_available"] = llama_cpp_available  # the chat tab needs the `local` extra
    return env


def page(
    template: str,
    http_status: int = 200,
    cookies: list[Cookie] | None = None,
    headers: dict[str, str] | None = None,
    **context: Any,
) -> Response[str]:
    """Render ``template`` with ``context`` into an HTML response (``headers`` beside the security ones)."""
    html = environment().get_template(template).render(**context)
    return Response(
        html,
        status_code=http_status,
        media_type=MediaType.HTML,
        headers={**SECURITY_HEADERS, **(headers or {})},
        cookies=cookies or [],
    )
