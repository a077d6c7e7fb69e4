"""The inspector's chat page on the real local model: each turn goes the way of
``/v1/chat/completions`` and shows its KV outcome; a read key gets no form and 403 for a forged post."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from elephantasm.domain.keys import KeyScope
from elephantasm.runtime import Runtime
from elephantasm.services.keys import create_key
from tests.conftest import Tenant
from tests.local.conftest import seed_anima
from tests.ui import browser
from tests.ui.client import CSRF, hidden, sign_in

CONVERSATION = re.compile(r'name="conversation" value="([^"]*)"')
KV = re.compile(r'<span class="kv (\w+)" title="X-Elephantasm-KV">')


async def _post(client: httpx.AsyncClient, path: str, page: str, message: str) -> str:
    """Send ``message`` in the conversation ``page`` shows; the page it redirects to (POST-redirect-GET)."""
    data = {
        "message": message,
        "conversation": hidden(CONVERSATION, page),
        "csrf_token": hidden(CSRF, page),
    }
    r = await client.post(path, data=data)
    assert r.status_code == 303, r.text[:1000]
    assert r.headers["location"].startswith(f"{path}?conversation="), r.headers["location"]
    return r.headers["location"]


async def _say(client: httpx.AsyncClient, path: str, page: str, message: str) -> str:
    """Send ``message`` and follow the redirect; returns the next page."""
    r = await client.get(await _post(client, path, page, message))
    assert r.status_code == 200, r.text[:1000]
    return r.text


async def test_a_conversation_shows_each_turns_kv_outcome(
    browser_like: httpx.AsyncClient, client: httpx.AsyncClient, tenant: Tenant, anima: dict
) -> None:
    await seed_anima(client, tenant.headers, anima["id"])
    await sign_in(browser_like, tenant.api_key)
    path = f"/ui/animas/{anima['id']}/chat"
    assert f'href="{path}"' in (await browser_like.get(f"/ui/animas/{anima['id']}")).text  # the tab is offered
    page = (await browser_like.get(path)).text
    assert 'id="no-turns"' in page
    page = await _say(browser_like, path, page, "Which city do I live in?")
    assert KV.findall(page) == ["miss"]  # the pack's prefix was computed, then saved
    page = await _say(browser_like, path, page, "And my cat?")
    assert KV.findall(page) == ["miss", "hit"]  # same conversation, same pack: its KV state restored
    shown = html.unescape(page)
    assert shown.count('class="turn user"') == 2 and shown.count('class="turn assistant"') == 2
    recorded = await client.get("/api/events", params={"anima_id": anima["id"], "limit": 100}, headers=tenant.headers)
    chat = [e for e in recorded.json()["items"] if (e.get("meta") or {}).get("source") == "chat"]
    assert {"Which city do I live in?", "And my cat?"} <= {e["content"] for e in chat}


async def test_reloading_the_page_after_a_turn_sends_nothing_again(
    browser_like: httpx.AsyncClient, client: httpx.AsyncClient, tenant: Tenant, anima: dict
) -> None:
    await sign_in(browser_like, tenant.api_key)
    path = f"/ui/animas/{anima['id']}/chat"
    shown = await _post(browser_like, path, (await browser_like.get(path)).text, "Hello there")
    first = await browser_like.get(shown)
    assert first.status_code == 200 and "Hello there" in html.unescape(first.text)
    assert KV.findall(first.text) == ["miss"]
    events = await client.get("/api/events", params={"anima_id": anima["id"], "limit": 100}, headers=tenant.headers)
    for _ in range(2):  # a reload is a GET of the same page: the same conversation, nothing sent
        again = await browser_like.get(shown)
        assert again.status_code == 200 and KV.findall(again.text) == ["miss"]
        assert html.unescape(again.text).count('class="turn user"') == 1
    after = await client.get("/api/events", params={"anima_id": anima["id"], "limit": 100}, headers=tenant.headers)
    assert after.json()["items"] == events.json()["items"]
    other = await browser_like.get(path, params={"conversation": "ui-" + "0" * 32})
    assert other.status_code == 200 and 'id="no-turns"' in other.text, "an unknown conversation is empty"


async def test_a_read_key_cannot_chat(
    browser_like: httpx.AsyncClient, client: httpx.AsyncClient, tenant: Tenant, anima: dict, runtime: Runtime
) -> None:
    async with runtime.unit_of_work() as session:
        read_key = (await create_key(session, runtime.secret, tenant.org_name, scope=KeyScope.READ)).key
    await sign_in(browser_like, read_key)
    path = f"/ui/animas/{anima['id']}/chat"
    page = (await browser_like.get(path)).text
    assert 'id="chat-read-only"' in page and 'id="chat-form"' not in page
    r = await browser_like.post(path, data={"message": "hi", "csrf_token": hidden(CSRF, page)})
    assert r.status_code == 403 and "needs a 'write' key" in html.unescape(r.text)
    recorded = await client.get("/api/events", params={"anima_id": anima["id"]}, headers=tenant.headers)
    assert recorded.json()["items"] == []


@pytest.fixture
def driver() -> Iterator[Any]:
    """A fresh headless Chromium for one test."""
    if browser.missing():
        pytest.skip(str(browser.missing()))
    with browser.chromium() as d:
        yield d


async def test_chatting_in_the_browser(
    driver: Any, live_server: str, client: httpx.AsyncClient, tenant: Tenant, anima: dict
) -> None:
    from selenium.webdriver.common.by import By

    await seed_anima(client, tenant.headers, anima["id"])
    browser.sign_in(driver, live_server, tenant.api_key)
    driver.get(f"{live_server}/ui/animas/{anima['id']}")
    driver.find_element(By.LINK_TEXT, "Chat").click()
    driver.find_element(By.ID, "chat-message").send_keys("Which city do I live in?")
    driver.find_element(By.ID, "chat-send").click()
    browser.wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "li.turn.assistant"), seconds=180)
    assert driver.find_element(By.CSS_SELECTOR, "li.turn.assistant .kv").text == "KV miss"
    assert driver.find_element(By.CSS_SELECTOR, "li.turn.user .text").text == "Which city do I live in?"
    assert driver.find_element(By.CSS_SELECTOR, "li.turn.assistant .text").text.strip()
