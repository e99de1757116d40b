"""The documentation site builds offline and reads in a browser: every tutorial page shows its charts, with no
console error and no request to another host.

Building executes the seven tutorials (this is where the suite runs them in this environment; the Binder test
runs them again in a fresh one), so the build happens once per run, in a module fixture. ``SSBLAB_DOCS_HTML``
points the tests at a site already built (``make docs``) instead.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser import chromium, require_browser

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:")


def expected_charts(notebook: Path) -> int:
    """How many charts a tutorial shows: its code cells that display one (`as_altair` or a widget's chart)."""
    cells = json.loads(notebook.read_text())["cells"]
    return sum(1 for cell in cells if cell["cell_type"] == "code" and "as_altair(" in "".join(cell["source"]))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    built = os.environ.get("SSBLAB_DOCS_HTML")
    if built:
        return Path(built)
    pytest.importorskip("myst_nb", reason="the docs extra is not installed")
    out = tmp_path_factory.mktemp("docs")
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", "-d", str(out / "doctrees"), "docs",
                    str(out / "html")], cwd=ROOT, check=True, timeout=1800)
    print(f"docs built in {time.perf_counter() - started:.0f} s")
    return out / "html"


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    require_browser()
    with chromium(tmp_path_factory.mktemp("chromium") / "chromedriver.log", logging=True) as driver:
        driver.set_page_load_timeout(60)
        yield driver


def visit(driver: Any, url: str) -> dict[str, Any]:
    """Open ``url`` and wait until it and its images have loaded; returns what the page asked for and printed:
    ``requests`` (every URL requested), ``errors`` (console messages at error level) and ``charts`` (the chart
    images in cell outputs: their ``src`` and whether they drew)."""
    driver.get_log("performance"), driver.get_log("browser")  # drop what earlier pages left
    driver.get(url)
    deadline = time.monotonic() + 30
    while driver.execute_script("return document.readyState !== 'complete' || "
                                "[...document.images].some(i => !i.complete)") and time.monotonic() < deadline:
        time.sleep(0.2)
    requests = [event["params"]["request"]["url"] for entry in driver.get_log("performance")
                if (event := json.loads(entry["message"])["message"])["method"] == "Network.requestWillBeSent"]
    errors = [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    charts = driver.execute_script("return [...document.querySelectorAll('.cell_output img')]"
                                   ".filter(i => i.src.endsWith('.svg'))"
                                   ".map(i => ({src: i.src, drawn: i.naturalWidth > 100}))")
    return {"requests": requests, "errors": errors, "charts": charts}


def outside(requests: list[str], site: Path) -> list[str]:
    """The requests that leave the site: another host, or a file outside its folder."""
    root = site.resolve().as_uri()
    return [url for url in requests if not url.startswith(LOCAL_SCHEMES) or
            (url.startswith("file:") and not url.startswith(root))]


def test_the_checks_catch_a_page_that_calls_out_or_fails(browser: Any, tmp_path: Path) -> None:
    page = tmp_path / "bad.html"
    page.write_text('<html><body><script src="http://127.0.0.2:9/vega.js"></script>'
                    '<script>console.error("chart failed")</script></body></html>')
    seen = visit(browser, page.as_uri())
    assert outside(seen["requests"], tmp_path) == ["http://127.0.0.2:9/vega.js"]
    assert any("chart failed" in message for message in seen["errors"])


@pytest.mark.slow
@pytest.mark.timeout(2400)  # the first one waits for the build (the site fixture), which runs the seven tutorials
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_tutorial_page_shows_its_charts_offline(site: Path, browser: Any, notebook: Path) -> None:
    page = site / "tutorials" / f"{notebook.stem}.html"
    assert page.is_file(), f"the site has no page for {notebook.name}"
    seen = visit(browser, page.as_uri())
    assert not outside(seen["requests"], site), seen["requests"]
    assert not seen["errors"]
    assert len(seen["charts"]) == expected_charts(notebook), seen["charts"]
    assert all(chart["drawn"] for chart in seen["charts"]), seen["charts"]
    assert "Traceback" not in browser.find_element("css selector", "main").text


@pytest.mark.slow
@pytest.mark.timeout(2400)
def test_gallery_cli_and_api_pages(site: Path, browser: Any) -> None:
    gallery = visit(browser, (site / "gallery.html").as_uri())
    drawn = browser.execute_script("return [...document.querySelectorAll('.ssblab-gallery img')]"
                                   ".filter(i => i.naturalWidth > 100).length")
    assert drawn == sum(map(expected_charts, NOTEBOOKS)) and not gallery["errors"]
    assert not outside(gallery["requests"], site)
    cli = visit(browser, (site / "cli.html").as_uri())
    titles = browser.execute_script("return [...document.querySelectorAll('main h2')].map(h => h.innerText)")
    from ssblab.cli import build_parser

    verbs = next(a for a in build_parser()._actions if a.dest == "verb").choices
    assert {f"ssblab {verb}" for verb in verbs} <= {t.strip("#¶ \n") for t in titles}, titles
    assert not cli["errors"] and not outside(cli["requests"], site)
    api = (site / "api" / "ssblab.core.html").read_text()
    assert 'id="ssblab.core.verify_message"' in api and 'id="ssblab.core.Keypair"' in api
