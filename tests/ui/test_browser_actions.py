"""The inspector's actions in a real browser (headless Chromium against a live ``elephantasm serve``):
edit and forget a memory, forget knowledge, dream now and watch the run end, create an anima; and a
read-scoped key that sees no action and gets 403 for a forged post. Skips where Chromium is absent.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from elephantasm.domain.keys import KeyScope
from elephantasm.runtime import Runtime
from tests.conftest import make_tenant
from tests.dreams.helpers import add_events, turns
from tests.ui import browser
from tests.ui.conftest import World
from tests.ui.seed import Small, seed_small
from tests.ui.test_ui_scopes import key_of

pytestmark = pytest.mark.skipif(browser.missing() is not None, reason=str(browser.missing()))

ACTION_IDS = ("create-anima-button", "memory-actions", "save-memory", "forget-memory", "forget-knowledge", "dream-now")


@pytest.fixture
def driver() -> Iterator[Any]:
    """A fresh headless Chromium for one test."""
    with browser.chromium() as d:
        yield d


@pytest.fixture
async def small(runtime: Runtime, world: World) -> Small:
    """A fresh dreamed anima of the owner's org (each test changes its own)."""
    return await seed_small(runtime, world.owner.org_id)


def _by_id(driver: Any, element_id: str) -> Any:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.ID, element_id)


def _confirm(driver: Any) -> None:
    """Accept the "are you sure?" dialog a destructive button opens."""
    from selenium.webdriver.support import expected_conditions

    browser.wait_for(driver, expected_conditions.alert_is_present())
    driver.switch_to.alert.accept()


def _heading(driver: Any) -> str:
    from selenium.webdriver.common.by import By

    return str(driver.find_element(By.TAG_NAME, "h1").text)


def _api(live_server: str, path: str, world: World) -> httpx.Response:
    return httpx.get(f"{live_server}{path}", headers=world.owner.headers)


def test_editing_a_memory(driver: Any, live_server: str, world: World, small: Small) -> None:
    mid = small.memory_ids[0]
    browser.sign_in(driver, live_server, world.owner.api_key)
    driver.get(f"{live_server}/ui/memories/{mid}")
    driver.find_element("css selector", "#memory-actions summary").click()
    summary = _by_id(driver, "edit-summary")
    summary.clear()
    summary.send_keys("The user moved to Hamburg in the end.")
    _by_id(driver, "save-memory").click()
    browser.wait_for(driver, lambda d: "edited=1" in d.current_url)
    assert _by_id(driver, "memory-summary").text == "The user moved to Hamburg in the end."
    assert _api(live_server, f"/api/memories/{mid}", world).json()["summary"] == "The user moved to Hamburg in the end."


def test_forgetting_a_memory(driver: Any, live_server: str, world: World, small: Small) -> None:
    mid = small.memory_ids[0]
    browser.sign_in(driver, live_server, world.owner.api_key)
    driver.get(f"{live_server}/ui/memories/{mid}")
    driver.find_element("css selector", "#memory-actions summary").click()
    _by_id(driver, "forget-memory").click()
    _confirm(driver)
    browser.wait_for(driver, lambda d: "forgotten=" in d.current_url)
    assert _by_id(driver, "forgotten").is_displayed() and f"/ui/memories/{mid}" not in driver.page_source
    driver.get(f"{live_server}/ui/memories/{mid}")
    assert _heading(driver).startswith("404")
    assert _api(live_server, f"/api/memories/{mid}", world).status_code == 404


def test_forgetting_a_knowledge_item(driver: Any, live_server: str, world: World, small: Small) -> None:
    kid = small.knowledge_ids[0]
    browser.sign_in(driver, live_server, world.owner.api_key)
    driver.get(f"{live_server}/ui/knowledge/{kid}")
    _by_id(driver, "forget-knowledge").click()
    _confirm(driver)
    browser.wait_for(driver, lambda d: "forgotten=" in d.current_url)
    assert _by_id(driver, "forgotten").is_displayed()
    assert _api(live_server, f"/api/knowledge/{kid}", world).status_code == 404


def _run_status(driver: Any) -> str | None:
    """The run page's status, or None while the page is reloading."""
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException

    try:
        return str(_by_id(driver, "run-status").text)
    except (NoSuchElementException, StaleElementReferenceException):
        return None


async def test_dreaming_now_and_watching_the_run_end(
    driver: Any, live_server: str, world: World, small: Small, runtime: Runtime
) -> None:
    await add_events(runtime, world.owner.org_id, small.anima_id, turns(["I adopted a cat named Miso.", "Lovely!"]))
    browser.sign_in(driver, live_server, world.owner.api_key)
    driver.get(f"{live_server}/ui/animas/{small.anima_id}/dreams")
    _by_id(driver, "dream-now").click()
    browser.wait_for(driver, lambda d: "/ui/dreams/" in d.current_url)
    run_id = driver.current_url.rsplit("/", 1)[1]
    # Nothing is clicked from here: the page reloads itself while the run is running.
    assert browser.wait_for(driver, lambda d: _run_status(d) in ("completed", "failed"), seconds=120) is True
    assert _run_status(driver) == "completed"
    run = _api(live_server, f"/api/dreams/sessions/{run_id}", world).json()
    assert run["status"] == "completed" and run["trigger"] == "manual" and run["events_read"] == 2


async def test_creating_an_anima(driver: Any, live_server: str, runtime: Runtime) -> None:
    tenant = await make_tenant(runtime, "ui-browser-create")
    browser.sign_in(driver, live_server, tenant.api_key)
    _by_id(driver, "new-anima-name").send_keys("research-bot")
    _by_id(driver, "new-anima-description").send_keys("Reads papers.")
    _by_id(driver, "create-anima-button").click()
    browser.wait_for(driver, lambda d: d.current_url.rstrip("/") != f"{live_server}/ui/animas")
    assert _heading(driver) == "research-bot"
    listed = httpx.get(f"{live_server}/api/animas", headers=tenant.headers).json()["items"]
    assert [(a["name"], a["description"]) for a in listed] == [("research-bot", "Reads papers.")]
    assert driver.current_url.endswith(f"/ui/animas/{listed[0]['id']}")


async def test_a_read_key_sees_no_action_and_a_forged_post_is_refused(
    driver: Any, live_server: str, world: World, small: Small, runtime: Runtime
) -> None:
    from selenium.webdriver.common.by import By

    browser.sign_in(driver, live_server, await key_of(runtime, world, KeyScope.READ))
    mid, a = small.memory_ids[0], f"/ui/animas/{small.anima_id}"
    for path in ("/ui/animas", f"/ui/memories/{mid}", f"/ui/knowledge/{small.knowledge_ids[0]}", f"{a}/dreams"):
        driver.get(live_server + path)
        assert driver.find_element(By.TAG_NAME, "main").is_displayed(), path
        assert [i for i in ACTION_IDS if driver.find_elements(By.ID, i)] == [], path
        assert not driver.find_elements(By.CSS_SELECTOR, "button.restore"), path
    # A forged post from the page itself, with the session's valid CSRF token (the sign-out form's).
    driver.execute_script(
        """const form = document.createElement("form");
        form.method = "post"; form.action = arguments[0];
        const token = document.createElement("input");
        token.type = "hidden"; token.name = "csrf_token";
        token.value = document.querySelector("input[name=csrf_token]").value;
        form.appendChild(token); document.body.appendChild(form); form.submit();""",
        f"/ui/memories/{mid}/forget",
    )
    browser.wait_for(driver, lambda d: d.current_url.endswith("/forget"))
    assert _heading(driver).startswith("403")
    assert "needs a 'write' key" in _by_id(driver, "error-detail").text
    assert _api(live_server, f"/api/memories/{mid}", world).status_code == 200
