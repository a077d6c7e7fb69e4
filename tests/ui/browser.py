"""Headless Chromium for the inspector's browser tests (Debian's chromium + chromium-driver, selenium).

Nothing is downloaded: the browser and driver paths are given, so Selenium Manager never runs.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM_ARGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
    "--window-size=1360,900",
)


def missing() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[dev]')"
    if not (browser_path() and driver_path()):
        return "chromium / chromedriver not found (apt-get install -y chromium chromium-driver)"
    return None


def browser_path() -> str | None:
    """The Chromium binary."""
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def driver_path() -> str | None:
    """The chromedriver binary."""
    return shutil.which("chromedriver")


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium with a fresh profile, closed (and its profile removed) afterwards."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = Path(tempfile.mkdtemp(prefix="elephantasm-chromium-"))
    options = webdriver.ChromeOptions()
    options.binary_location = browser_path() or ""
    for arg in (*CHROMIUM_ARGS, f"--user-data-dir={profile}"):
        options.add_argument(arg)
    os.environ.setdefault("SE_OFFLINE", "true")  # never let Selenium Manager reach the network
    driver = webdriver.Chrome(options=options, service=Service(executable_path=driver_path() or ""))
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def wait_for(driver: Any, condition: Any, seconds: float = 30) -> Any:
    """Wait (up to ``seconds``: the machine is shared) until ``condition(driver)`` is truthy; returns it."""
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, seconds).until(condition)


def sign_in(driver: Any, base: str, key: str) -> None:
    """Open a page with no session, get sent to the sign-in form, sign in with ``key``."""
    from selenium.webdriver.common.by import By

    driver.get(f"{base}/ui/animas")
    assert "/ui/login" in driver.current_url  # no session yet: sent to the sign-in form
    driver.find_element(By.ID, "api-key").send_keys(key)
    driver.find_element(By.ID, "sign-in").click()
    wait_for(driver, lambda d: "/ui/login" not in d.current_url)
    assert driver.current_url.endswith("/ui/animas"), driver.current_url
