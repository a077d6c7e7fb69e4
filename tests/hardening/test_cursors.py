"""Pagination cursors are typed and signed (issue 28, item 4): a cursor the server did not issue is a
422 naming ``cursor`` on every list, API and inspector alike, never a 500; the ones it issues keep
paging, whatever instant their row holds."""

from __future__ import annotations

import base64
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import httpx
import pytest
from sqlalchemy import text

from elephantasm.db.keyset import cursor_key, decode_cursor, encode_cursor
from elephantasm.domain.errors import ValidationError
from elephantasm.runtime import Runtime
from tests.conftest import Tenant
from tests.hardening.helpers import error
from tests.ui.client import sign_in


@pytest.fixture
async def browser_like(app) -> AsyncIterator[httpx.AsyncClient]:  # type: ignore[no-untyped-def]
    """A client with a cookie jar of its own (the shared ``client`` must never hold a UI session)."""
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as c:
        yield c


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def forged_cursors() -> dict[str, str]:
    """Hand-made cursors of the shapes that once crashed the decoder, and near misses of real ones."""
    real = encode_cursor(datetime(2026, 1, 1, tzinfo=UTC), uuid.uuid4(), cursor_key(b"another server"))
    flipped = ("A" if real[5] != "A" else "B").join((real[:5], real[6:]))
    return {
        "non-string id": _b64(b'["2026-01-01T00:00:00+00:00", 5]'),
        "nested brackets": _b64(b"[" * 2000 + b"]" * 2000),
        "not base64": "%%%not-a-cursor%%%",
        "empty-ish": "=",
        "signed elsewhere": real,
        "one character altered": flipped,
        "huge": "A" * 10_000,
    }


LISTS = ["/api/events", "/api/memories", "/api/knowledge", "/api/dreams/sessions", "/api/animas"]


async def test_forged_cursors_are_422_on_every_api_list(client: httpx.AsyncClient, tenant: Tenant, anima: dict) -> None:
    paths = [*LISTS, f"/api/animas/{anima['id']}/memory-packs"]
    for path in paths:
        for name, cursor in forged_cursors().items():
            params = {"cursor": cursor}
            if path != "/api/animas" and "memory-packs" not in path:
                params["anima_id"] = anima["id"]
            r = await client.get(path, params=params, headers=tenant.headers)
            assert "cursor" in error(r, 422), (path, name)
    # A cursor this server issued, one character altered.
    await client.post("/api/animas", json={"name": "second"}, headers=tenant.headers)
    issued = (await client.get("/api/animas", params={"limit": 1}, headers=tenant.headers)).json()["next_cursor"]
    assert (await client.get("/api/animas", params={"cursor": issued}, headers=tenant.headers)).status_code == 200
    for i in (0, len(issued) // 2, len(issued) - 1):
        altered = issued[:i] + ("B" if issued[i] == "A" else "A") + issued[i + 1 :]
        r = await client.get("/api/animas", params={"cursor": altered}, headers=tenant.headers)
        assert "cursor" in error(r, 422), i


async def test_forged_cursors_are_422_on_every_inspector_list(
    browser_like: httpx.AsyncClient, tenant: Tenant, anima: dict
) -> None:
    assert (await sign_in(browser_like, tenant.api_key)).status_code == 303
    aid = anima["id"]
    pages = ["/ui/animas", *(f"/ui/animas/{aid}/{page}" for page in ("events", "dreams", "memories", "knowledge"))]
    for page in pages:
        for name, cursor in forged_cursors().items():
            r = await browser_like.get(page, params={"cursor": cursor})
            assert r.status_code == 422, (page, name, r.status_code)
            assert "cursor" in r.text, (page, name)


def test_a_cursor_decodes_only_under_its_key() -> None:
    at, row_id = datetime(1, 1, 1, tzinfo=UTC), uuid.uuid4()  # any stored instant round-trips
    key = cursor_key(b"secret")
    assert decode_cursor(encode_cursor(at, row_id, key), key) == (at, row_id)
    with pytest.raises(ValidationError, match="cursor"):
        decode_cursor(encode_cursor(at, row_id, key), cursor_key(b"other secret"))


async def test_a_cursor_over_an_out_of_window_row_still_pages(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    """A row stored with an instant the API would refuse (written before the rule, or by hand) no
    longer makes its list unpageable: the server accepts back every cursor it signed."""
    names = []
    for name in ("first", "second", "third"):
        r = await client.post("/api/animas", json={"name": name}, headers=tenant.headers)
        names.append(r.json()["id"])
    async with runtime.unit_of_work() as session:
        await session.execute(
            text("UPDATE animas SET created_at = '0001-01-01T00:00:00Z' WHERE id = :id"), {"id": uuid.UUID(names[0])}
        )
    seen, cursor = [], None
    for _ in range(len(names) + 1):  # a cursor that led back would loop forever
        params = {"limit": 1} | ({"cursor": cursor} if cursor else {})
        r = await client.get("/api/animas", params=params, headers=tenant.headers)
        assert r.status_code == 200, r.text
        seen += [a["id"] for a in r.json()["items"]]
        if not (cursor := r.json()["next_cursor"]):
            break
    assert seen == names
