"""The inspector over plain HTTP: sign-in and its cookie, CSRF, org scoping (404), every page."""

from __future__ import annotations

import html
import re
import uuid

import httpx

from elephantasm.runtime import Runtime
from elephantasm.services.keys import revoke_key
from tests.ui.client import CSRF, TOKEN, hidden, sign_in
from tests.ui.conftest import World

PRE = re.compile(r'<pre class="prompt" id="pack-context">(.*?)</pre>', re.DOTALL)


def owner_pages(world: World) -> dict[str, str]:
    """Every page of the seeded anima, with a text each must show."""
    s = world.seeded
    a = f"/ui/animas/{s.anima_id}"
    return {
        "/ui/animas": "assistant",
        a: "Dream runs",
        f"{a}/events": "I moved to Berlin last week.",
        f"{a}/events?session_id=move&event_type=message.in": "I moved to Berlin last week.",
        f"{a}/events?since=2000-01-01": "I moved to Berlin last week.",
        f"/ui/events/{s.event_id}": "Memories distilled from it",
        f"{a}/memories": "from events",
        f"{a}/memories?q=Berlin": "similarity",
        f"/ui/memories/{s.memory_id}": "Provenance",
        f"{a}/knowledge?superseded=true": "superseded",
        f"/ui/knowledge/{s.knowledge_id}": "Berlin",
        f"/ui/knowledge/{s.superseded_id}": "Paris",
        f"{a}/identity": "Compare versions",
        f"{a}/dreams": "completed",
        f"/ui/dreams/{s.run_id}": "Journal",
        f"{a}/pack?query=where+do+I+live&max_tokens=300": "Cut, and why",
    }


async def test_pages_redirect_to_sign_in_without_a_session(browser_like: httpx.AsyncClient, world: World) -> None:
    for path in owner_pages(world):
        r = await browser_like.get(path)
        assert r.status_code == 303, path
        assert r.headers["location"].startswith("/ui/login?next=%2Fui%2F"), r.headers["location"]
    forged = {"elephantasm_ui": f"{uuid.uuid4().hex}.9999999999.nonce.c2lnbmF0dXJl"}
    browser_like.cookies.update(forged)
    r = await browser_like.get("/ui/animas")
    assert r.status_code == 303


async def test_sign_in_sets_a_strict_httponly_cookie_that_does_not_hold_the_key(
    browser_like: httpx.AsyncClient, world: World
) -> None:
    r = await sign_in(browser_like, world.owner.api_key, f"/ui/animas/{world.seeded.anima_id}")
    assert r.status_code == 303 and r.headers["location"] == f"/ui/animas/{world.seeded.anima_id}"
    session_cookie = next(c for c in r.headers.get_list("set-cookie") if c.startswith("elephantasm_ui="))
    flags = {part.strip().lower() for part in session_cookie.split(";")}
    assert {"httponly", "samesite=strict", "path=/ui"} <= flags and "secure" not in flags
    assert world.owner.api_key not in session_cookie and world.owner.api_key[8:20] not in session_cookie
    page = await browser_like.get("/ui/animas")
    assert page.status_code == 200 and world.owner.org_name in page.text
    assert (
        page.headers["cache-control"] == "no-store"
        and "frame-ancestors 'none'" in page.headers["content-security-policy"]
    )


async def test_cookie_is_secure_over_https(app, world: World) -> None:  # type: ignore[no-untyped-def]
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="https://test") as c:
        r = await sign_in(c, world.owner.api_key)
    cookie = next(c for c in r.headers.get_list("set-cookie") if c.startswith("elephantasm_ui="))
    assert "secure" in cookie.lower()


async def test_a_wrong_key_is_refused_and_opens_no_session(browser_like: httpx.AsyncClient, world: World) -> None:
    r = await sign_in(browser_like, "sk_live_" + "x" * 43)
    assert r.status_code == 401 and "invalid, revoked or expired API key" in r.text
    assert "elephantasm_ui=" not in " ".join(r.headers.get_list("set-cookie")).replace("elephantasm_ui_login", "")
    assert (await browser_like.get("/ui/animas")).status_code == 303


async def test_sign_in_needs_the_forms_token_and_same_origin(browser_like: httpx.AsyncClient, world: World) -> None:
    # a cross-site form (no pre-sign-in cookie, no token): login CSRF is refused
    r = await browser_like.post("/ui/login", data={"api_key": world.owner.api_key, "token": "x"})
    assert r.status_code == 403
    form = await browser_like.get("/ui/login")
    data = {"api_key": world.owner.api_key, "token": hidden(TOKEN, form.text)}
    r = await browser_like.post("/ui/login", data=data, headers={"Origin": "https://evil.example"})
    assert r.status_code == 403
    r = await browser_like.post("/ui/login", data=data, headers={"Sec-Fetch-Site": "cross-site"})
    assert r.status_code == 403
    assert (await browser_like.get("/ui/animas")).status_code == 303
    # the same form from the site itself (behind a proxy: tests/hardening/test_forwarded_for.py)
    assert (await browser_like.post("/ui/login", data=data, headers={"Origin": "http://test"})).status_code == 303


async def test_every_page_renders_for_the_owner(browser_like: httpx.AsyncClient, world: World) -> None:
    await sign_in(browser_like, world.owner.api_key)
    for path, text in owner_pages(world).items():
        r = await browser_like.get(path)
        assert r.status_code == 200, (path, r.text[:500])
        assert text in html.unescape(r.text), (path, text)
        assert "other-assistant" not in r.text


async def test_another_org_sees_none_of_it(browser_like: httpx.AsyncClient, world: World) -> None:
    await sign_in(browser_like, world.other.api_key)
    listing = await browser_like.get("/ui/animas")
    assert "other-assistant" in listing.text and str(world.seeded.anima_id) not in listing.text
    for path in owner_pages(world):
        if path == "/ui/animas":
            continue
        r = await browser_like.get(path)
        assert r.status_code == 404, path
        assert "I moved to Berlin" not in r.text
    csrf = hidden(CSRF, listing.text)  # a valid token of this session: the org scope still says 404
    r = await browser_like.post(
        f"/ui/animas/{world.seeded.anima_id}/identity/restore", data={"version": "1", "csrf_token": csrf}
    )
    assert r.status_code == 404
    assert (await browser_like.get("/ui/animas/not-a-uuid")).status_code == 404


async def test_composer_shows_exactly_the_served_prompt(
    browser_like: httpx.AsyncClient, client: httpx.AsyncClient, world: World
) -> None:
    await sign_in(browser_like, world.owner.api_key)
    # No query: memories render their summaries, and 200 tokens cannot hold them all (with a query,
    # this small anima's matched-turn lines all fit).
    params = {"max_tokens": 200, "preset": "conversational"}
    for _ in range(2):  # the as_of hour may tick between the two requests: then once more
        page = await browser_like.get(f"/ui/animas/{world.seeded.anima_id}/pack", params=params)
        served = (
            await client.get(
                f"/api/animas/{world.seeded.anima_id}/memory-packs/latest", params=params, headers=world.owner.headers
            )
        ).json()
        if served["fingerprint"][:16] in page.text:
            break
    assert page.status_code == 200
    assert html.unescape(PRE.search(page.text).group(1)) == served["context"]  # type: ignore[union-attr]
    assert f'id="pack-tokens">{served["token_count"]}<' in page.text
    assert "cut by the budget" in page.text  # 200 tokens cannot hold everything


async def test_forms_need_the_sessions_csrf_token(
    browser_like: httpx.AsyncClient, world: World, runtime: Runtime
) -> None:
    await sign_in(browser_like, world.owner.api_key)
    url = f"/ui/animas/{world.seeded.anima_id}/identity"
    assert (await browser_like.post(f"{url}/restore", data={"version": "1"})).status_code == 403
    assert (await browser_like.post(f"{url}/restore", data={"version": "1", "csrf_token": "forged"})).status_code == 403
    assert (await browser_like.post("/ui/logout", data={})).status_code == 403
    as_file = {"csrf_token": ("t.txt", b"forged", "text/plain")}  # a token sent as a file upload
    assert (await browser_like.post("/ui/logout", files=as_file)).status_code == 403
    csrf = hidden(CSRF, (await browser_like.get(url)).text)
    before = (await browser_like.get(url)).text.count('class="restore"')
    r = await browser_like.post(f"{url}/restore", data={"version": "1", "csrf_token": csrf})
    assert r.status_code == 303 and r.headers["location"] == f"{url}?restored=1"
    after = await browser_like.get(r.headers["location"])
    assert "Version 1 restored" in after.text and after.text.count('class="restore"') == before + 1


async def test_sign_out_and_revocation_end_the_session(
    browser_like: httpx.AsyncClient, world: World, runtime: Runtime
) -> None:
    from tests.conftest import make_tenant

    tenant = await make_tenant(runtime, "ui-revoke")
    await sign_in(browser_like, tenant.api_key)
    page = await browser_like.get("/ui/animas")
    r = await browser_like.post("/ui/logout", data={"csrf_token": hidden(CSRF, page.text)})
    assert r.status_code == 303 and r.headers["location"] == "/ui/login"
    assert any(c.startswith("elephantasm_ui=") and "max-age=0" in c.lower() for c in r.headers.get_list("set-cookie"))
    assert (await browser_like.get("/ui/animas")).status_code == 303

    await sign_in(browser_like, tenant.api_key)
    assert (await browser_like.get("/ui/animas")).status_code == 200
    async with runtime.unit_of_work() as session:
        await revoke_key(session, tenant.api_key[:14], tenant.org_id)
    assert (await browser_like.get("/ui/animas")).status_code == 303


async def test_bad_filters_are_422_pages(browser_like: httpx.AsyncClient, world: World) -> None:
    await sign_in(browser_like, world.owner.api_key)
    a = f"/ui/animas/{world.seeded.anima_id}"
    for path, name in (
        (f"{a}/events?event_type=nope", "event_type"),
        (f"{a}/memories?state=nope", "state"),
        (f"{a}/knowledge?type=nope", "type"),
        (f"{a}/pack?preset=nope", "preset"),
        (f"{a}/pack?max_tokens=5", "max_tokens"),
        (f"{a}/identity?b=99", "version 99"),
        (f"{a}/events?since=yesterday", "since"),
    ):
        r = await browser_like.get(path)
        assert r.status_code in (400, 404, 422), (path, r.status_code)
        assert r.headers["content-type"].startswith("text/html"), (path, r.text)
        assert name in html.unescape(r.text), (path, r.text[:400])


async def test_timeline_filters_narrow_the_events(browser_like: httpx.AsyncClient, world: World) -> None:
    await sign_in(browser_like, world.owner.api_key)
    a = f"/ui/animas/{world.seeded.anima_id}/events"
    future = await browser_like.get(a, params={"since": "2999-01-01"})
    assert future.status_code == 200 and 'id="no-events"' in future.text
    session = html.unescape((await browser_like.get(a, params={"session_id": "work"})).text)
    assert "billing migration" in session and "I moved to Berlin" not in session
    outgoing = html.unescape((await browser_like.get(a, params={"event_type": "message.out"})).text)
    assert "Welcome to Berlin!" in outgoing and "I moved to Berlin last week." not in outgoing


async def test_an_empty_anima_renders_every_page(
    browser_like: httpx.AsyncClient, client: httpx.AsyncClient, world: World
) -> None:
    created = await client.post("/api/animas", json={"name": "blank"}, headers=world.owner.headers)
    a = f"/ui/animas/{created.json()['id']}"
    await sign_in(browser_like, world.owner.api_key)
    for path, marker in (
        (a, "none yet"),
        (f"{a}/events", 'id="no-events"'),
        (f"{a}/memories", 'id="no-memories"'),
        (f"{a}/knowledge", 'id="no-knowledge"'),
        (f"{a}/identity", 'id="no-identity"'),
        (f"{a}/dreams", 'id="no-dreams"'),
        (f"{a}/pack", 'id="pack-null"'),
    ):
        r = await browser_like.get(path)
        assert r.status_code == 200 and marker in r.text, path


async def test_composer_says_what_was_filtered_out_for_low_relevance(
    browser_like: httpx.AsyncClient, world: World
) -> None:
    await sign_in(browser_like, world.owner.api_key)
    # A budget big enough for everything offered: the packer cuts nothing, yet knowledge that is not
    # about the question never reached it.
    page = await browser_like.get(
        f"/ui/animas/{world.seeded.anima_id}/pack", params={"query": "email Dana about the budget", "max_tokens": 8000}
    )
    text = html.unescape(page.text)
    assert page.status_code == 200 and 'id="pack-filtered"' in text, text[:2000]
    assert "Every candidate fitted." not in text
    shown = int(re.search(r'id="pack-filtered-count">(\d+)<', text).group(1))  # type: ignore[union-attr]
    rows = re.findall(r"relevance ([\d.]+) to the query is below the floor ([\d.]+)", text)
    assert shown == len(rows) > 0 and all(float(r) < float(floor) for r, floor in rows)
