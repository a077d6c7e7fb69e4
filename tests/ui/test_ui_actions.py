"""The inspector's actions over plain HTTP: edit and forget a memory, forget knowledge, dream now,
create an anima. Each needs the session's CSRF token and a key that may write (as its API twin),
keeps to the org (404 elsewhere), and leaves the same state as the API would."""

from __future__ import annotations

import asyncio
import html

import httpx
import pytest

from elephantasm.domain.keys import KeyScope
from elephantasm.runtime import Runtime
from elephantasm.services.dreams import execute_run, start_run
from tests.conftest import Tenant, make_tenant
from tests.dreams.helpers import add_events, turns
from tests.ui.client import CSRF, hidden, sign_in
from tests.ui.conftest import World
from tests.ui.seed import Small, seed_small
from tests.ui.test_ui_scopes import key_of

ACTION_BUTTONS = (
    "create-anima-button",
    "save-memory",
    "forget-memory",
    "forget-knowledge",
    "dream-now",
    'class="restore"',
)


@pytest.fixture
async def small(runtime: Runtime, world: World) -> Small:
    """A fresh dreamed anima of the owner's org (each test changes its own)."""
    return await seed_small(runtime, world.owner.org_id)


async def csrf_of(client: httpx.AsyncClient, path: str) -> str:
    page = await client.get(path)
    assert page.status_code == 200, page.text[:300]
    return hidden(CSRF, page.text)


async def test_editing_a_memory_changes_it_as_the_api_would(
    browser_like: httpx.AsyncClient, client: httpx.AsyncClient, world: World, small: Small
) -> None:
    mid = small.memory_ids[0]
    api = f"/api/memories/{mid}"
    before = (await client.get(api, headers=world.owner.headers)).json()
    await sign_in(browser_like, world.owner.api_key)
    page = f"/ui/memories/{mid}"
    csrf = await csrf_of(browser_like, page)
    # the form as sent back untouched (a browser sends the textarea's line breaks as CRLF): nothing changes
    same = {"summary": before["summary"], "content": (before["content"] or "").replace("\n", "\r\n")}
    r = await browser_like.post(f"{page}/edit", data={**same, "csrf_token": csrf})
    assert r.status_code == 303 and r.headers["location"] == f"{page}?edited=0"
    assert (await client.get(api, headers=world.owner.headers)).json()["updated_at"] == before["updated_at"]

    edited = {"summary": "The user moved to Hamburg, not Berlin.", "content": "Corrected by hand.\r\nSecond line."}
    r = await browser_like.post(f"{page}/edit", data={**edited, "csrf_token": csrf})
    assert r.status_code == 303 and r.headers["location"] == f"{page}?edited=1"
    after = (await client.get(api, headers=world.owner.headers)).json()
    assert after["summary"] == edited["summary"] and after["content"] == "Corrected by hand.\nSecond line."
    shown = html.unescape((await browser_like.get(r.headers["location"])).text)
    assert 'id="edited"' in shown and edited["summary"] in shown
    # the new summary is what semantic search now finds (re-embedded, as PATCH does)
    hits = await client.post(
        "/api/memories/search/semantic",
        json={"anima_id": str(small.anima_id), "query": edited["summary"], "limit": 1},
        headers=world.owner.headers,
    )
    assert hits.json()[0]["id"] == str(mid)


async def test_a_blank_summary_is_refused_and_changes_nothing(
    browser_like: httpx.AsyncClient, client: httpx.AsyncClient, world: World, small: Small
) -> None:
    mid = small.memory_ids[0]
    before = (await client.get(f"/api/memories/{mid}", headers=world.owner.headers)).json()
    await sign_in(browser_like, world.owner.api_key)
    csrf = await csrf_of(browser_like, f"/ui/memories/{mid}")
    r = await browser_like.post(f"/ui/memories/{mid}/edit", data={"summary": "  ", "content": "", "csrf_token": csrf})
    assert r.status_code == 422 and "summary" in html.unescape(r.text)
    assert (await client.get(f"/api/memories/{mid}", headers=world.owner.headers)).json() == before


async def forget_in_ui(client: httpx.AsyncClient, kind: str, item_id: object, anima_id: object) -> httpx.Response:
    """Press the item's forget button; returns the list page it leads to."""
    page = "memories" if kind == "memory" else "knowledge"
    csrf = await csrf_of(client, f"/ui/{page}/{item_id}")
    r = await client.post(f"/ui/{page}/{item_id}/forget", data={"csrf_token": csrf})
    assert r.status_code == 303 and r.headers["location"] == f"/ui/animas/{anima_id}/{page}?forgotten={item_id}"
    shown = await client.get(r.headers["location"])
    assert 'id="forgotten"' in shown.text and f"/ui/{page}/{item_id}" not in shown.text
    assert (await client.get(f"/ui/{page}/{item_id}")).status_code == 404
    again = await client.post(f"/ui/{page}/{item_id}/forget", data={"csrf_token": csrf})
    assert again.status_code == 404  # as DELETE answers for an item already forgotten
    return shown


@pytest.mark.parametrize("kind", ["memory", "knowledge"])
async def test_forgetting_removes_the_item_everywhere(
    browser_like: httpx.AsyncClient, client: httpx.AsyncClient, world: World, small: Small, kind: str
) -> None:
    item_id = small.memory_ids[0] if kind == "memory" else small.knowledge_ids[0]
    await sign_in(browser_like, world.owner.api_key)
    await forget_in_ui(browser_like, kind, item_id, small.anima_id)
    api = "memories" if kind == "memory" else "knowledge"
    assert (await client.get(f"/api/{api}/{item_id}", headers=world.owner.headers)).status_code == 404
    if kind == "knowledge":  # forgetting knowledge leaves the memories it came from
        for mid in small.memory_ids:
            assert (await client.get(f"/api/memories/{mid}", headers=world.owner.headers)).status_code == 200


async def test_dream_now_starts_a_run_whose_page_reloads_until_it_ends(
    browser_like: httpx.AsyncClient, client: httpx.AsyncClient, world: World, small: Small, runtime: Runtime
) -> None:
    await add_events(runtime, world.owner.org_id, small.anima_id, turns(["I adopted a cat named Miso.", "Lovely!"]))
    await sign_in(browser_like, world.owner.api_key)
    dreams = f"/ui/animas/{small.anima_id}/dreams"
    r = await browser_like.post(f"{dreams}/trigger", data={"csrf_token": await csrf_of(browser_like, dreams)})
    assert r.status_code == 303 and r.headers["location"].startswith("/ui/dreams/")
    run_id = r.headers["location"].rsplit("/", 1)[1]
    run = None
    for _ in range(600):  # the run ends on the server's own schedule; the page shows its status meanwhile
        run = (await client.get(f"/api/dreams/sessions/{run_id}", headers=world.owner.headers)).json()
        if run["status"] != "running":
            break
        await asyncio.sleep(0.1)
    assert run is not None and run["status"] == "completed" and run["trigger"] == "manual" and run["events_read"] == 2
    done = await browser_like.get(r.headers["location"])
    assert 'id="run-status">completed<' in done.text and 'http-equiv="refresh"' not in done.text


async def test_a_running_runs_page_reloads_itself(
    browser_like: httpx.AsyncClient, world: World, small: Small, runtime: Runtime
) -> None:
    run = await start_run(runtime.dreams, world.owner.org_id, small.anima_id, "manual")
    await sign_in(browser_like, world.owner.api_key)
    page = await browser_like.get(f"/ui/dreams/{run.id}")
    assert '<meta http-equiv="refresh" content="2">' in page.text and 'id="run-running"' in page.text
    dreams = f"/ui/animas/{small.anima_id}/dreams"
    r = await browser_like.post(f"{dreams}/trigger", data={"csrf_token": await csrf_of(browser_like, dreams)})
    assert r.status_code == 409 and "already running" in html.unescape(r.text)  # as the API answers
    await execute_run(runtime.dreams, run)
    assert 'http-equiv="refresh"' not in (await browser_like.get(f"/ui/dreams/{run.id}")).text


async def test_creating_an_anima(browser_like: httpx.AsyncClient, client: httpx.AsyncClient, runtime: Runtime) -> None:
    tenant = await make_tenant(runtime, "ui-create")
    await sign_in(browser_like, tenant.api_key)
    csrf = await csrf_of(browser_like, "/ui/animas")
    r = await browser_like.post(
        "/ui/animas", data={"name": " research-bot ", "description": "Reads papers.", "csrf_token": csrf}
    )
    assert r.status_code == 303
    created = (await client.get("/api/animas", headers=tenant.headers)).json()["items"]
    assert [(a["name"], a["description"]) for a in created] == [("research-bot", "Reads papers.")]
    assert r.headers["location"] == f"/ui/animas/{created[0]['id']}"
    for bad, field in (
        ({"name": ""}, "name"),
        ({"name": "x" * 201}, "name"),
        ({"name": "ok", "description": "d" * 10_001}, "description"),
    ):
        r = await browser_like.post("/ui/animas", data={**bad, "csrf_token": csrf})
        assert r.status_code == 422 and field in html.unescape(r.text), bad
    assert len((await client.get("/api/animas", headers=tenant.headers)).json()["items"]) == 1


def _forms(world: World, small: Small) -> dict[str, dict[str, str]]:
    """Every action's path and fields (without the CSRF token)."""
    return {
        "/ui/animas": {"name": "forged"},
        f"/ui/memories/{small.memory_ids[0]}/edit": {"summary": "forged", "content": ""},
        f"/ui/memories/{small.memory_ids[0]}/forget": {},
        f"/ui/knowledge/{small.knowledge_ids[0]}/forget": {},
        f"/ui/animas/{small.anima_id}/dreams/trigger": {},
        f"/ui/animas/{small.anima_id}/identity/restore": {"version": "1"},
    }


async def _state(client: httpx.AsyncClient, owner: Tenant, small: Small) -> dict:
    h = owner.headers
    return {
        "animas": (await client.get("/api/animas", params={"limit": 1000}, headers=h)).json(),
        "memory": (await client.get(f"/api/memories/{small.memory_ids[0]}", headers=h)).json(),
        "knowledge": (await client.get(f"/api/knowledge/{small.knowledge_ids[0]}", headers=h)).json(),
        "runs": (await client.get("/api/dreams/sessions", params={"anima_id": str(small.anima_id)}, headers=h)).json(),
    }


async def test_a_read_key_sees_no_action_and_a_forged_post_is_403(
    browser_like: httpx.AsyncClient, client: httpx.AsyncClient, world: World, small: Small, runtime: Runtime
) -> None:
    await sign_in(browser_like, await key_of(runtime, world, KeyScope.READ))
    a = f"/ui/animas/{small.anima_id}"
    for path in (
        "/ui/animas",
        f"/ui/memories/{small.memory_ids[0]}",
        f"/ui/knowledge/{small.knowledge_ids[0]}",
        f"{a}/dreams",
        f"{a}/identity",
    ):
        page = await browser_like.get(path)
        assert page.status_code == 200 and not [b for b in ACTION_BUTTONS if b in page.text], path
    csrf = hidden(CSRF, page.text)  # the sign-out form's token: valid for this session
    before = await _state(client, world.owner, small)
    for path, fields in _forms(world, small).items():
        r = await browser_like.post(path, data={**fields, "csrf_token": csrf})
        assert r.status_code == 403, (path, r.status_code)
        assert "needs a 'write' key" in html.unescape(r.text), path
    assert await _state(client, world.owner, small) == before


async def test_every_action_needs_the_csrf_token_and_stays_in_the_org(
    browser_like: httpx.AsyncClient, client: httpx.AsyncClient, world: World, small: Small
) -> None:
    before = await _state(client, world.owner, small)
    await sign_in(browser_like, world.owner.api_key)
    for path, fields in _forms(world, small).items():
        for token in ({}, {"csrf_token": "forged"}):
            assert (await browser_like.post(path, data={**fields, **token})).status_code == 403, path
    await browser_like.post("/ui/logout", data={"csrf_token": await csrf_of(browser_like, "/ui/animas")})
    await sign_in(browser_like, world.other.api_key)  # another org's write key, with a valid token
    csrf = await csrf_of(browser_like, "/ui/animas")
    for path, fields in _forms(world, small).items():
        if path == "/ui/animas":
            continue  # creating is always in the signed-in org
        assert (await browser_like.post(path, data={**fields, "csrf_token": csrf})).status_code == 404, path
    assert await _state(client, world.owner, small) == before


async def test_a_write_key_sees_every_action(
    browser_like: httpx.AsyncClient, world: World, small: Small, runtime: Runtime
) -> None:
    await sign_in(browser_like, await key_of(runtime, world, KeyScope.WRITE))
    a = f"/ui/animas/{small.anima_id}"
    seen = ""
    for path in (
        "/ui/animas",
        f"/ui/memories/{small.memory_ids[0]}",
        f"/ui/knowledge/{small.knowledge_ids[0]}",
        f"{a}/dreams",
    ):
        seen += (await browser_like.get(path)).text
    assert [b for b in ACTION_BUTTONS[:-1] if b not in seen] == []  # restore needs a second identity version
