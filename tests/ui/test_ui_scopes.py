"""An inspector session carries its key's scope and expiry: a read key reads and never writes."""

from __future__ import annotations

import html
from datetime import UTC, datetime, timedelta

import httpx
from sqlalchemy import func, select

from elephantasm.db.models import IdentityVersion
from elephantasm.domain.keys import KeyScope
from elephantasm.runtime import Runtime
from elephantasm.services.keys import create_key
from tests.ui.client import CSRF, hidden, sign_in
from tests.ui.conftest import World


async def key_of(runtime: Runtime, world: World, scope: KeyScope, expires_at: datetime | None = None) -> str:
    """A new key of the seeded org with ``scope``."""
    async with runtime.unit_of_work() as session:
        issued = await create_key(session, runtime.secret, world.owner.org_name, expires_at=expires_at, scope=scope)
    return issued.key


async def identity_versions(runtime: Runtime, world: World) -> int:
    async with runtime.read_session() as session:
        stmt = select(func.count()).where(IdentityVersion.anima_id == world.seeded.anima_id)
        return int((await session.execute(stmt)).scalar_one())


async def test_a_read_key_cannot_restore_an_identity(
    browser_like: httpx.AsyncClient, client: httpx.AsyncClient, world: World, runtime: Runtime
) -> None:
    read_key = await key_of(runtime, world, KeyScope.READ)
    url = f"/ui/animas/{world.seeded.anima_id}/identity"
    api = await client.post(
        f"/api/identities/anima/{world.seeded.anima_id}/restore",
        json={"version": 1},
        headers={"Authorization": f"Bearer {read_key}"},
    )
    assert api.status_code == 403  # the API twin's answer
    await sign_in(browser_like, read_key)
    page = await browser_like.get(url)
    assert page.status_code == 200 and 'class="restore"' not in page.text  # no button to press
    before = await identity_versions(runtime, world)
    r = await browser_like.post(f"{url}/restore", data={"version": "1", "csrf_token": hidden(CSRF, page.text)})
    assert r.status_code == 403, r.text
    assert "scope 'read'" in html.unescape(r.text) and "needs a 'write' key" in html.unescape(r.text)
    assert await identity_versions(runtime, world) == before


async def test_a_read_key_may_still_sign_out(browser_like: httpx.AsyncClient, world: World, runtime: Runtime) -> None:
    await sign_in(browser_like, await key_of(runtime, world, KeyScope.READ))
    page = await browser_like.get("/ui/animas")
    r = await browser_like.post("/ui/logout", data={"csrf_token": hidden(CSRF, page.text)})
    assert r.status_code == 303 and r.headers["location"] == "/ui/login"


async def test_a_write_key_sees_the_restore_button(
    browser_like: httpx.AsyncClient, world: World, runtime: Runtime
) -> None:
    await sign_in(browser_like, await key_of(runtime, world, KeyScope.WRITE))
    page = await browser_like.get(f"/ui/animas/{world.seeded.anima_id}/identity")
    assert 'class="restore"' in page.text


async def test_the_session_ends_when_the_key_expires(
    browser_like: httpx.AsyncClient, world: World, runtime: Runtime
) -> None:
    soon = datetime.now(UTC) + timedelta(minutes=5)
    r = await sign_in(browser_like, await key_of(runtime, world, KeyScope.WRITE, expires_at=soon))
    session_cookie = next(c for c in r.headers.get_list("set-cookie") if c.startswith("elephantasm_ui="))
    max_age = next(int(p.split("=")[1]) for p in session_cookie.split(";") if p.strip().lower().startswith("max-age"))
    assert max_age <= 300  # never longer than the key lives (ui_session_hours is 12 h)
    assert (await browser_like.get("/ui/animas")).status_code == 200
