"""The inspector in a real browser: headless Chromium against a live ``elephantasm serve``.

Signs in with a key, opens every page, runs the pack composer, checks that a second org sees
none of the first org's data, signs out. Skips (saying why) where Chromium is not installed.
``ELEPHANTASM_UI_SCREENSHOTS=<dir>`` also saves a PNG of each page there (how docs/screenshots
was made).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.ui import browser
from tests.ui.conftest import World

pytestmark = pytest.mark.skipif(browser.missing() is not None, reason=str(browser.missing()))


@pytest.fixture
def driver() -> Iterator[Any]:
    """A fresh headless Chromium for one test."""
    with browser.chromium() as d:
        yield d


def _shot(driver: Any, name: str) -> None:
    target = os.environ.get("ELEPHANTASM_UI_SCREENSHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        height = driver.execute_script("return Math.min(document.body.scrollHeight, 1800)")
        driver.set_window_size(1360, max(700, height))
        driver.save_screenshot(str(Path(target) / f"{name}.png"))
        driver.set_window_size(1360, 900)


def _sign_out(driver: Any, base: str) -> None:
    from selenium.webdriver.common.by import By

    driver.find_element(By.ID, "sign-out").click()
    browser.wait_for(driver, lambda d: "/ui/login" in d.current_url)
    assert driver.get_cookie("elephantasm_ui") is None
    driver.get(f"{base}/ui/animas")
    assert "/ui/login" in driver.current_url


def _pages(world: World) -> list[tuple[str, str, str]]:
    """(screenshot name, path, element id that must be on the page)."""
    s, a = world.seeded, f"/ui/animas/{world.seeded.anima_id}"
    return [
        ("animas", "/ui/animas", "animas"),
        ("anima", a, "org-name"),
        ("events", f"{a}/events", "events"),
        ("event", f"/ui/events/{s.event_id}", "event-memories"),
        ("memories", f"{a}/memories", "memories"),
        ("memory-search", f"{a}/memories?q=Berlin", "memories"),
        ("memory", f"/ui/memories/{s.memory_id}", "provenance"),
        ("knowledge", f"{a}/knowledge?superseded=true", "knowledge"),
        ("knowledge-history", f"/ui/knowledge/{s.knowledge_id}", "supersession"),
        ("identity", f"{a}/identity", "identity-diff"),
        ("dreams", f"{a}/dreams", "dreams"),
        ("dream", f"/ui/dreams/{s.run_id}", "journal"),
    ]


def test_owner_browses_every_page_and_composes_a_pack(driver: Any, live_server: str, world: World) -> None:
    from selenium.webdriver.common.by import By

    driver.get(f"{live_server}/ui/login")
    _shot(driver, "sign-in")
    browser.sign_in(driver, live_server, world.owner.api_key)
    cookie = driver.get_cookie("elephantasm_ui")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["path"] == "/ui"
    assert driver.execute_script("return document.cookie").find("elephantasm_ui=") == -1  # invisible to JS
    for name, path, element in _pages(world):
        driver.get(live_server + path)
        assert driver.find_element(By.ID, element).is_displayed(), path
        assert "other-assistant" not in driver.page_source
        _shot(driver, name)

    driver.get(f"{live_server}/ui/animas/{world.seeded.anima_id}/pack")
    # No query: memories render their summaries, and 200 tokens cannot hold them all (with a query,
    # this small anima's matched-turn lines all fit).
    assert driver.find_element(By.ID, "pack-query").is_displayed()
    budget = driver.find_element(By.ID, "pack-budget")
    budget.clear()
    budget.send_keys("200")
    driver.find_element(By.ID, "compose").click()
    browser.wait_for(driver, lambda d: "max_tokens=200" in d.current_url)
    shown = driver.find_element(By.ID, "pack-context").get_attribute("textContent")
    served = httpx.get(
        f"{live_server}/api/animas/{world.seeded.anima_id}/memory-packs/latest",
        params={"max_tokens": 200},
        headers=world.owner.headers,
    ).json()
    if served["fingerprint"][:16] not in driver.page_source:  # the as_of hour ticked in between: compose again
        driver.refresh()
        shown = driver.find_element(By.ID, "pack-context").get_attribute("textContent")
    assert shown == served["context"]
    assert driver.find_element(By.ID, "pack-tokens").text == str(served["token_count"])
    cut = driver.find_element(By.ID, "pack-cut").text
    assert "cut by the budget" in cut
    _shot(driver, "pack-composer")
    _sign_out(driver, live_server)


def test_a_second_org_sees_nothing_of_the_first(driver: Any, live_server: str, world: World) -> None:
    from selenium.webdriver.common.by import By

    browser.sign_in(driver, live_server, world.other.api_key)
    listing = driver.find_element(By.ID, "animas").text
    assert "other-assistant" in listing and str(world.seeded.anima_id) not in driver.page_source
    for _name, path, _element in _pages(world)[1:]:
        driver.get(live_server + path)
        assert driver.find_element(By.TAG_NAME, "h1").text.startswith("404"), path
        assert "Berlin" not in driver.find_element(By.ID, "error-detail").text
    driver.get(f"{live_server}/ui/animas/{world.seeded.anima_id}/pack?query=where+do+I+live")
    assert driver.find_element(By.TAG_NAME, "h1").text.startswith("404")
    driver.get(f"{live_server}/ui/animas")
    _sign_out(driver, live_server)
