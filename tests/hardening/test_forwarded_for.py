"""``X-Forwarded-For`` (the failed-auth limit's client address) and ``X-Forwarded-Host`` (the
inspector's same-origin check) are trusted only from the proxies ``ELEPHANTASM_FORWARDED_ALLOW_IPS`` names.

Against a real ``elephantasm serve`` (uvicorn applies the setting): by default a client on loopback
cannot dodge the failed-auth limit by naming a new address in every request.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from elephantasm.runtime import build_runtime
from elephantasm.settings import Settings
from tests.conftest import TEST_SECRET, Tenant
from tests.support.servers import free_port, server_env, start_server, stop_server
from tests.ui.client import TOKEN, hidden

WRONG = {"Authorization": "Bearer sk_live_" + "x" * 43}
LIMIT = 3


@contextmanager
def serving(pg_url: str, data_dir: Path, name: str, **extra: str) -> Iterator[str]:
    """A ``serve`` process allowing ``LIMIT`` failed keys a minute per client address."""
    port = free_port()
    env = server_env(pg_url, TEST_SECRET, data_dir, ELEPHANTASM_AUTH_FAILURE_LIMIT=str(LIMIT), **extra)
    env.pop("FORWARDED_ALLOW_IPS", None)  # uvicorn's own variable must not decide either
    proc = start_server(env, port, data_dir / f"{name}.log")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_server(proc)


def _as(address: str, headers: dict[str, str] | None = None) -> dict[str, str]:
    return {**(headers or {}), "X-Forwarded-For": address}


def test_by_default_a_forwarded_address_is_ignored(pg_url: str, data_dir: Path, tenant: Tenant) -> None:
    with serving(pg_url, data_dir, "forwarded-default") as base:
        for i in range(LIMIT):
            r = httpx.get(f"{base}/api/animas", headers=_as(f"203.0.113.{i}", WRONG))
            assert r.status_code == 401
        # every "new address" was loopback all along: its budget is spent, a good key waits too
        r = httpx.get(f"{base}/api/animas", headers=_as("203.0.113.99", tenant.headers))
        assert r.status_code == 429 and int(r.headers["retry-after"]) > 0


def test_a_configured_proxy_names_the_client(pg_url: str, data_dir: Path, tenant: Tenant) -> None:
    with serving(pg_url, data_dir, "forwarded-trusted", ELEPHANTASM_FORWARDED_ALLOW_IPS="127.0.0.1") as base:
        for _ in range(LIMIT):
            assert httpx.get(f"{base}/api/animas", headers=_as("203.0.113.7", WRONG)).status_code == 401
        assert httpx.get(f"{base}/api/animas", headers=_as("203.0.113.7", tenant.headers)).status_code == 429
        assert httpx.get(f"{base}/api/animas", headers=_as("203.0.113.8", tenant.headers)).status_code == 200


async def _sign_in_status(app: Any, api_key: str, headers: dict[str, str], peer: str = "127.0.0.1") -> int:
    """The status of an inspector sign-in posted from ``peer`` with ``headers`` (token and cookie valid)."""
    transport = httpx.ASGITransport(app=app, client=(peer, 40000))
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as browser:
        form = await browser.get("/ui/login")
        data = {"api_key": api_key, "token": hidden(TOKEN, form.text)}
        return (await browser.post("/ui/login", data=data, headers=headers)).status_code


PROXIED = {"Origin": "https://mem.example", "X-Forwarded-Host": "mem.example"}


async def test_a_forwarded_host_from_an_untrusted_client_does_not_make_a_foreign_origin_same_site(
    app: Any, tenant: Tenant
) -> None:
    """Unset ``ELEPHANTASM_FORWARDED_ALLOW_IPS``: a client naming its own X-Forwarded-Host cannot make
    any Origin match the host it reached."""
    assert await _sign_in_status(app, tenant.api_key, PROXIED) == 403
    forged = {"Origin": "https://evil.example", "X-Forwarded-Host": "evil.example"}
    assert await _sign_in_status(app, tenant.api_key, forged) == 403
    assert await _sign_in_status(app, tenant.api_key, {"Origin": "http://test"}) == 303


@pytest.fixture
async def proxied_app(settings: Settings, pg_url: str) -> AsyncIterator[Any]:
    """The app behind a reverse proxy on 127.0.0.1 (``ELEPHANTASM_FORWARDED_ALLOW_IPS``)."""
    from api.app import create_app

    runtime = build_runtime(settings.model_copy(update={"forwarded_allow_ips": "127.0.0.1"}), database_url=pg_url)
    yield create_app(runtime)
    await runtime.close()


async def test_a_forwarded_host_counts_only_from_a_configured_proxy(proxied_app: Any, tenant: Tenant) -> None:
    assert await _sign_in_status(proxied_app, tenant.api_key, PROXIED) == 303
    assert await _sign_in_status(proxied_app, tenant.api_key, PROXIED, peer="198.51.100.9") == 403
