"""Headless Chromium for the tests that look at what a person sees (Debian's chromium and chromedriver, selenium).

Processes: chromedriver starts in its own session (process group); whatever happens, ``chromium`` quits the browser
and then kills that group.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM_FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                  "--window-size=1400,1800")


def require_browser() -> None:
    """Skip the calling test, saying why, unless chromium, chromedriver and selenium are all there."""
    if shutil.which("chromium") is None or shutil.which("chromedriver") is None:
        pytest.skip("no headless browser: chromium and chromedriver are missing (scripts/install_browser.sh)")
    pytest.importorskip("selenium", reason="selenium is not installed (the dev extra)")


def kill_group(process: subprocess.Popen[Any] | None, grace: float = 10.0) -> None:
    """SIGTERM the process's group, then SIGKILL what is left after ``grace`` seconds."""
    if process is None:
        return
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(wait)
            return


@contextlib.contextmanager
def chromium(log: Path, *, logging: bool = False) -> Iterator[Any]:
    """Headless Chromium driven by Debian's chromedriver; ``logging`` keeps the console and DevTools network
    events, for `console_errors` and `requests`."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "chromium"
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    if logging:
        options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    service = Service(shutil.which("chromedriver"), log_output=str(log), popen_kw={"start_new_session": True})
    driver = None
    try:
        driver = webdriver.Chrome(options=options, service=service)
        yield driver
    finally:
        if driver is not None:
            with contextlib.suppress(Exception):
                driver.quit()
        kill_group(service.process, grace=5.0)
