"""How uvicorn treats a reverse proxy's forwarded headers: trusted only from the configured hosts.

uvicorn's own default trusts ``X-Forwarded-For``/``-Proto`` from loopback, so any local client
could name a new address in every request (and dodge the failed-auth limit, which counts per
client address). Here nothing is trusted unless ``ELEPHANTASM_FORWARDED_ALLOW_IPS`` names the proxy.
"""

from __future__ import annotations

from typing import Any

from elephantasm.settings import Settings


def uvicorn_proxy_options(settings: Settings) -> dict[str, Any]:
    """uvicorn's ``proxy_headers``/``forwarded_allow_ips`` for ``settings`` (off when unset)."""
    allowed = (settings.forwarded_allow_ips or "").strip() or None
    return {"proxy_headers": allowed is not None, "forwarded_allow_ips": allowed}
