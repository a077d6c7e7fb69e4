"""``X-Forwarded-For`` is trusted only from the proxies ``ELEPHANTASM_FORWARDED_ALLOW_IPS`` names.

Against a real ``elephantasm serve`` (uvicorn applies the setting): by default a client on loopback
cannot dodge the failed-auth limit by naming a new address in every request.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from elephantasm.settings import Settings
from tests.conftest import TEST_SECRET, Tenant
from tests.support.servers import free_port, server_env, start_server, stop_server

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


def test_uvicorn_gets_proxy_headers_only_when_configured() -> None:
    from elephantasm.cli.proxy import uvicorn_proxy_options

    assert uvicorn_proxy_options(Settings()) == {"proxy_headers": False, "forwarded_allow_ips": None}
    trusted = Settings(forwarded_allow_ips="10.0.0.1,10.0.0.2")
    assert uvicorn_proxy_options(trusted) == {"proxy_headers": True, "forwarded_allow_ips": "10.0.0.1,10.0.0.2"}
