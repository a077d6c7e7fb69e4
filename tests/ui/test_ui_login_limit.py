"""Failed sign-ins at ``/ui/login`` count in the same per-address limiter as failed API keys."""

from __future__ import annotations

import dataclasses
import html

import httpx

from api.app import create_app
from elephantasm.runtime import Runtime
from tests.conftest import Tenant
from tests.ui.client import sign_in

WRONG = "sk_live_" + "x" * 43
LIMIT = 3


def _limited_app(runtime: Runtime):  # type: ignore[no-untyped-def]
    """An app whose limiter allows ``LIMIT`` failures a minute (its own limiter: other tests unaffected)."""
    settings = runtime.settings.model_copy(update={"auth_failure_limit": LIMIT, "auth_failure_window_seconds": 60})
    return create_app(dataclasses.replace(runtime, settings=settings))


def _client(app, address: str) -> httpx.AsyncClient:  # type: ignore[no-untyped-def]
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app, client=(address, 40000)), base_url="http://test")


async def test_wrong_keys_at_the_sign_in_form_are_limited(runtime: Runtime, tenant: Tenant) -> None:
    app = _limited_app(runtime)
    async with _client(app, "10.1.0.1") as attacker, _client(app, "10.1.0.2") as bystander:
        for _ in range(LIMIT):
            assert (await sign_in(attacker, WRONG)).status_code == 401
        r = await sign_in(attacker, WRONG)
        assert r.status_code == 429 and int(r.headers["retry-after"]) > 0
        assert "too many failed authentication attempts" in html.unescape(r.text)
        r = await sign_in(attacker, tenant.api_key)  # a good key waits out the window too, as on the API
        assert r.status_code == 429 and "elephantasm_ui=" not in r.headers.get("set-cookie", "")
        assert (await attacker.get("/api/animas", headers=tenant.headers)).status_code == 429  # one budget
        assert (await sign_in(bystander, tenant.api_key)).status_code == 303  # another address is untouched


async def test_failed_api_keys_also_close_the_sign_in_form(runtime: Runtime, tenant: Tenant) -> None:
    app = _limited_app(runtime)
    async with _client(app, "10.1.0.3") as attacker:
        for _ in range(LIMIT):
            assert (await attacker.get("/api/animas", headers={"Authorization": f"Bearer {WRONG}"})).status_code == 401
        assert (await sign_in(attacker, tenant.api_key)).status_code == 429


async def test_a_malformed_key_counts_as_a_failure(runtime: Runtime, tenant: Tenant) -> None:
    app = _limited_app(runtime)
    async with _client(app, "10.1.0.4") as attacker:
        for _ in range(LIMIT):
            assert (await sign_in(attacker, "not a key")).status_code == 401
        assert (await sign_in(attacker, tenant.api_key)).status_code == 429
