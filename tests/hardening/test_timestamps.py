"""Timestamps outside a sane window are a 422 naming the field, never an OverflowError (issue 11.2)."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from tests.conftest import Tenant
from tests.hardening.helpers import error

OVERFLOWING = ["0001-01-01T00:00:00Z", "0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", "9999-12-31T23:59:59Z"]


def _event(anima: dict, **extra: str) -> dict:
    return {"anima_id": anima["id"], "event_type": "message.in", "content": "hello"} | extra


@pytest.mark.parametrize("occurred_at", [*OVERFLOWING, "1899-12-31T23:59:59Z", "in-two-days"])
async def test_occurred_at_outside_the_window_is_422(
    client: httpx.AsyncClient, tenant: Tenant, anima: dict, occurred_at: str
) -> None:
    if occurred_at == "in-two-days":
        occurred_at = (datetime.now(UTC) + timedelta(days=2)).isoformat()
    r = await client.post("/api/events", json=_event(anima, occurred_at=occurred_at), headers=tenant.headers)
    assert "occurred_at" in error(r, 422)
    batch = {"events": [_event(anima), _event(anima, occurred_at=occurred_at)]}
    r = await client.post("/api/events/batch", json=batch, headers=tenant.headers)
    assert "occurred_at" in error(r, 422)
    listed = await client.get("/api/events", params={"anima_id": anima["id"]}, headers=tenant.headers)
    assert listed.json()["items"] == []


async def test_occurred_at_inside_the_window_is_kept(client: httpx.AsyncClient, tenant: Tenant, anima: dict) -> None:
    soon = (datetime.now(UTC) + timedelta(hours=12)).replace(microsecond=0)
    for at in ("1900-01-01T00:00:00Z", soon.isoformat()):
        r = await client.post("/api/events", json=_event(anima, occurred_at=at), headers=tenant.headers)
        assert r.status_code == 201, r.text
        assert datetime.fromisoformat(r.json()["occurred_at"]) == datetime.fromisoformat(at.replace("Z", "+00:00"))


@pytest.mark.parametrize("value", OVERFLOWING)
@pytest.mark.parametrize("param", ["since", "until"])
async def test_since_until_out_of_range_is_422(
    client: httpx.AsyncClient, tenant: Tenant, param: str, value: str
) -> None:
    r = await client.get("/api/events", params={param: value}, headers=tenant.headers)
    assert param in error(r, 422)


async def test_naive_since_is_422_like_every_other_naive_instant(client: httpx.AsyncClient, tenant: Tenant) -> None:
    r = await client.get("/api/events", params={"since": "2026-01-01T00:00:00"}, headers=tenant.headers)
    assert "since" in error(r, 422) and "timezone" in error(r, 422)
    r = await client.post("/api/keys", json={"expires_at": "2099-01-01T00:00:00"}, headers=tenant.headers)
    assert "expires_at" in error(r, 422) and "timezone" in error(r, 422)


@pytest.mark.parametrize("value", OVERFLOWING)
async def test_as_of_and_expires_at_out_of_range_are_422(
    client: httpx.AsyncClient, tenant: Tenant, anima: dict, value: str
) -> None:
    r = await client.post("/api/packs/compile", json={"anima_id": anima["id"], "as_of": value}, headers=tenant.headers)
    assert "as_of" in error(r, 422)
    r = await client.post("/api/keys", json={"expires_at": value}, headers=tenant.headers)
    assert "expires_at" in error(r, 422)


@pytest.mark.parametrize("value", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"])
@pytest.mark.parametrize(
    "path", ["/api/events", "/api/animas", "/api/memories", "/api/knowledge", "/api/dreams/sessions"]
)
async def test_crafted_cursor_is_422(client: httpx.AsyncClient, tenant: Tenant, path: str, value: str) -> None:
    raw = json.dumps([value, "00000000-0000-4000-8000-000000000000"]).encode()
    cursor = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    r = await client.get(path, params={"cursor": cursor}, headers=tenant.headers)
    assert "cursor" in error(r, 422)
