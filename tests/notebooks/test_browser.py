"""End to end in a real browser: JupyterLab in headless Chromium runs a notebook of ssblab widgets, and the
screenshots of the rendered widgets are checked not to be blank.

The model tests (tests/widgets) check what the widgets compute; this checks that they reach the screen: that the
widget manager is installed, the views build, the charts render offline and the controls appear. It runs on
small generated data without Spark, so it takes well under two minutes.

Processes: JupyterLab and chromedriver each start in their own session (process group); whatever happens, the
``finally`` blocks ask JupyterLab to shut down (which stops its kernels), then kill both groups.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser import chromium, kill_group, require_browser

WIDGETS = ("ssblab-graph-explorer", "ssblab-moderation-panel", "ssblab-feed-browser")
CELLS = [
    "from ssblab.generate import GeneratedNetwork, NetworkSpec\n"
    "from ssblab.widgets import FeedBrowser, GraphExplorer, GraphSnapshot, ModerationPanel\n"
    "network = GeneratedNetwork(NetworkSpec(authors=20, messages=600, seed=3))\n"
    "messages = list(network.messages())\n"
    "snapshot = GraphSnapshot.from_messages(messages)\n"
    "root = GraphExplorer(snapshot).roots()[0]",
    "GraphExplorer(snapshot, root).widget()",
    "panel = ModerationPanel(snapshot, root)\n"
    "friend = panel.candidates()[0]\n"
    "panel.toggle(root, friend).set_watch(friend)\n"
    "panel.widget()",
    "FeedBrowser.from_messages(messages, names=dict(snapshot.names), page_size=5).widget()",
    "import pandas as pd\n"
    "from ssblab.viz import as_altair, replication_growth\n"
    "as_altair(replication_growth(pd.DataFrame({'hops': [0, 1, 2], 'feeds': [1, 6, 15]})))",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _notebook(path: Path) -> None:
    cells = [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": source}
             for source in CELLS]
    path.write_text(json.dumps({"cells": cells, "nbformat": 4, "nbformat_minor": 5, "metadata": {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}}))


@contextlib.contextmanager
def jupyterlab(root: Path) -> Iterator[str]:
    """A JupyterLab server on a free loopback port serving ``root``; yields its base URL with the token."""
    port, token = _free_port(), secrets.token_hex(16)
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(root / ".runtime"), "JUPYTER_CONFIG_DIR": str(root / ".config"),
           "JUPYTERLAB_SETTINGS_DIR": str(root / ".settings"), "JUPYTERLAB_WORKSPACES_DIR": str(root / ".workspaces")}
    log = (root / "jupyterlab.log").open("wb")
    lab = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
         "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
         "--LabApp.expose_app_in_browser=True", "--LabApp.extension_manager=readonly",
         "--allow-root"],  # CI runs as root in a container
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2).close()
                break
            except OSError as exc:
                if lab.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"JupyterLab did not start: see {root / 'jupyterlab.log'}") from exc
                time.sleep(0.5)
        yield f"{base}/lab/tree/widgets.ipynb?token={token}"
    finally:
        with contextlib.suppress(OSError):  # a clean shutdown stops the kernels too
            request = urllib.request.Request(f"{base}/api/shutdown?token={token}", method="POST")
            urllib.request.urlopen(request, timeout=5).close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            lab.wait(10)
        kill_group(lab)
        log.close()


def _wait_for(driver: Any, script: str, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = driver.execute_script(script)
        if value:
            return value
        time.sleep(0.5)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def _is_busy(png: Path) -> tuple[int, float]:
    """(distinct colours, share of pixels that differ from the most common one): a blank image has ~1 and ~0."""
    from PIL import Image

    image = Image.open(png).convert("RGB")
    colours = image.getcolors(maxcolors=1 << 20) or []
    top = max(count for count, _ in colours)
    return len(colours), 1 - top / (image.width * image.height)


@pytest.mark.slow
def test_widgets_render_in_jupyterlab(tmp_path: Path) -> None:
    require_browser()
    pytest.importorskip("jupyterlab", reason="jupyterlab is not installed (the notebooks extra)")
    pytest.importorskip("PIL", reason="pillow is not installed (the dev extra)")
    _notebook(tmp_path / "widgets.ipynb")
    shots = Path(os.environ.get("SSBLAB_SCREENSHOTS") or tmp_path / "screenshots")
    shots.mkdir(parents=True, exist_ok=True)
    with jupyterlab(tmp_path) as url, chromium(tmp_path / "chromedriver.log") as driver:
        driver.set_page_load_timeout(60)
        driver.get(url)
        _wait_for(driver, "return window.jupyterapp && document.querySelector('.jp-Notebook .jp-Cell')", 60,
                  "the notebook to open")
        _wait_for(driver, "const k = window.jupyterapp.shell.currentWidget?.sessionContext?.session?.kernel;"
                          "return k && k.status === 'idle'", 60, "the kernel to start")
        driver.execute_script("window.jupyterapp.commands.execute('notebook:run-all-cells')")
        selector = ", ".join(f".{name} svg, .{name} table" for name in WIDGETS)
        _wait_for(driver, f"return document.querySelectorAll('{selector}').length >= 3", 90,
                  "the three widgets to render")
        driver.save_screenshot(str(shots / "jupyterlab.png"))
        errors = driver.execute_script("return [...document.querySelectorAll('.jp-OutputArea-output')]"
                                       ".map(e => e.innerText).filter(t => t.includes('Traceback'))")
        assert not errors, errors
        # A chart renders through JupyterLab's own Vega (no network): the Vega-Lite output, not the fallback SVG.
        _wait_for(driver, "return document.querySelector('.jp-RenderedVegaCommon5 canvas, "
                          ".jp-RenderedVegaCommon5 svg')", 30, "the chart to render with JupyterLab's Vega")
        # A click on a feed of the explorer's drawing makes it the root.
        title = "document.querySelector('.ssblab-graph-explorer svg .title').textContent"
        before = driver.execute_script(f"return {title}")
        node = driver.find_element("css selector", ".ssblab-graph-explorer svg g.node:not(:first-of-type)")
        feed = node.get_attribute("data-feed")
        driver.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", node)
        _wait_for(driver, f"return {title} !== {before!r}", 30, "the clicked feed to become the root")
        assert feed[:7] in driver.execute_script(f"return {title}")
        for name in WIDGETS:
            element = driver.find_element("css selector", f".{name}")
            driver.execute_script("arguments[0].scrollIntoView()", element)
            assert element.find_elements("css selector", "select, button, .widget-slider, .widget-dropdown"), name
            png = shots / f"{name}.png"
            element.screenshot(str(png))
            colours, busy = _is_busy(png)
            assert colours > 40 and busy > 0.02, f"{name} looks blank: {colours} colours, {busy:.1%} not background"
